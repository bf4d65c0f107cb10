package main

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/jevlab/jevlab/evals/dataset"
)

// bindDataFlags declares the dataset field-mapping flags shared by eval
// and lint.
func bindDataFlags(f *pflag.FlagSet, idField, stateField, stateFields *string, labels *[]string) {
	f.StringVar(idField, "id-field", "", "dataset field holding the item id (default id); a path: input.id or /input/id")
	f.StringVar(stateField, "state-field", "", "dataset field holding the state (default state); a path: input.ticket or /input/ticket")
	f.StringVar(stateFields, "state-fields", "", "combine fields into an object state: subject,body (NAME=FIELD renames)")
	f.StringArrayVar(labels, "label", nil, "QUESTION=FIELD: read QUESTION's label from FIELD (a path: expect.queue); repeatable")
}

// flagDataOptions builds the dataset mapping from the flags.
func flagDataOptions(idField, stateField, stateFields string, labels []string) (dataset.Options, error) {
	opt := dataset.Options{IDField: idField, StateField: stateField}
	if stateFields != "" {
		if stateField != "" {
			return opt, errors.New("--state-field and --state-fields: give one, not both")
		}
		if err := opt.ParseStateFields(stateFields); err != nil {
			return opt, err
		}
	}
	for _, l := range labels {
		if err := opt.ParseLabelFlag(l); err != nil {
			return opt, err
		}
	}
	return opt, nil
}
