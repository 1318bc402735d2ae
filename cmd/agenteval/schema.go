package main

import (
	"github.com/agenteval/agenteval/suite"
	"github.com/spf13/cobra"
)

func newSchemaCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of eval files, for editor completion",
		Long: `Print a JSON Schema (draft 2020-12) of eval files. Save it and point your
editor's YAML support at it, for example with a first line in the suite:

  # yaml-language-server: $schema=./agenteval.schema.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := e.stdout.Write(suite.JSONSchema())
			return err
		},
	}
}
