package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func newModelsCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the models the System One server offers (GET /v1/models)",
		Long: `models asks the server chosen by --base-url or $TYPESAFE_BASE_URL (default
https://api.typesafe.ai) for its models, with the key in $TYPESAFE_API_KEY
(a loopback stand-in such as jevlab serve needs none). It always calls out,
so it fails under --offline.`,
		Example: `  jevlab models
  jevlab serve --synthetic & jevlab models --base-url http://127.0.0.1:8089 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.offline {
				return usageErr(errors.New("models asks the server for its list and never answers offline; run it without --offline"))
			}
			c, _, err := a.liveClient()
			if errors.Is(err, errNoKey) {
				return usageErr(fmt.Errorf("$%s is not set: models needs an API key for %s (or --base-url pointing at a loopback stand-in)", a.keyEnv, describeBase(a.baseURL)))
			}
			if err != nil {
				return err
			}
			models, err := c.Models(cmd.Context())
			if err != nil {
				return askError(err)
			}
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				return enc.Encode(models)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "MODEL\tRELEASED\tDESCRIPTION")
			for _, m := range models {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Name, m.ReleaseDate, m.Description)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	return cmd
}

// describeBase names the server a command would call, for messages.
func describeBase(flag string) string {
	if flag != "" {
		return flag
	}
	return "the server ($TYPESAFE_BASE_URL or https://api.typesafe.ai)"
}
