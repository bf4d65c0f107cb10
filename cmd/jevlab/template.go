package main

import (
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// runTemplate is the one run configuration every run of this invocation
// starts from — `jevlab eval` and runs started in the workbench alike —
// filled from the global flags: provider and its mode, base URL (when it
// calls out), version, concurrency, rps, timeout, cache flags.
func (a *app) runTemplate(db *store.DB, p provider.Provider, mode Mode) *workbench.RunTemplate {
	t := &workbench.RunTemplate{
		DB: db, Provider: p, ProviderKind: string(mode), Version: versionString(), Build: summaryBuild(),
		Concurrency: a.concurrency, RPS: a.rps, Timeout: a.timeout, Fresh: a.fresh, Offline: a.offline,
	}
	if mode != ModeOffline && mode != "" {
		if base, _, err := a.resolveHost(); err == nil {
			t.BaseURL = base
		}
	}
	return t
}
