package main

import (
	"strings"
	"testing"

	"github.com/jevlab/jevlab/store"
)

func TestMigrationProgressOnStderr(t *testing.T) {
	var out, errb strings.Builder
	a := newApp(nil, &out, &errb)
	a.migrationProgress(store.MigrationProgress{Migration: "20261203_0300_exchange_bodies", Step: "storing question bodies once", Done: 41, Total: 100})
	want := "jevlab: upgrading the database (20261203_0300_exchange_bodies): storing question bodies once: 41% (41 of 100)\n"
	if errb.String() != want || out.Len() != 0 {
		t.Fatalf("stderr %q, stdout %q; want %q on stderr", errb.String(), out.String(), want)
	}
}
