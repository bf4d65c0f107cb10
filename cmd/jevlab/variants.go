package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// bindVariantsFlag declares --variants on f: repeatable; bare means all.
func bindVariantsFlag(f *pflag.FlagSet, v *[]string) {
	f.StringArrayVar(v, "variants", nil, "ask variants beside their questions in the same request: all (or the bare flag), QUESTION, or QUESTION:v2,v3 (repeatable)")
	f.Lookup("variants").NoOptDefVal = "all"
}

// variantsArgs returns the FILE argument of a command taking --variants.
// A bare --variants takes no value, so `--variants queue:v2 FILE` leaves
// the spec as a second argument: it is taken as the flag's value when
// exactly one of the two arguments is a file.
func variantsArgs(cmd *cobra.Command, args []string, v *[]string) (string, error) {
	if len(args) == 1 {
		return args[0], nil
	}
	if !cmd.Flags().Changed("variants") || len(*v) == 0 || (*v)[len(*v)-1] != "all" {
		return "", fmt.Errorf("one FILE expected, got %d arguments (%s)", len(args), strings.Join(args, " "))
	}
	isFile := func(p string) bool { fi, err := os.Stat(p); return err == nil && fi.Mode().IsRegular() }
	a, b := isFile(args[0]), isFile(args[1])
	if a == b {
		return "", fmt.Errorf("one FILE expected, got %s; write the variants as --variants=SPEC", strings.Join(args, " "))
	}
	file, spec := args[0], args[1]
	if b {
		file, spec = args[1], args[0]
	}
	(*v)[len(*v)-1] = spec
	return file, nil
}
