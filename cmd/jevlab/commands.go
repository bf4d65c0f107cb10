package main

import "github.com/spf13/cobra"

// commands lists every subcommand; each is defined in its own file.
func commands(a *app) []*cobra.Command {
	return []*cobra.Command{
		// one line per command, e.g. newAskCmd(a),
		newAskCmd(a),
		newModelsCmd(a),
		newEvalCmd(a),
		newProbeCmd(a),
		newRunsCmd(a),
		newShowCmd(a),
		newCompareCmd(a),
		newLogCmd(a),
		newSuggestCmd(a),
		newReportCmd(a),
		newLintCmd(a),
		newImportCmd(a),
		newExportCmd(a),
		newServeCmd(a),
	}
}
