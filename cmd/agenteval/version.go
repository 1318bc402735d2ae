package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise it comes from the module's build information.
var version = ""

// moduleVersion is the release version, or "dev".
func moduleVersion() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok && v == "" {
		v = bi.Main.Version
	}
	if v == "" || v == "(devel)" {
		return "dev"
	}
	return v
}

func versionString() string {
	return fmt.Sprintf("agenteval %s %s %s/%s", shortVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// shortVersion is the version and commit, as run headers record them.
func shortVersion() string {
	v, rev, dirty := version, "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if v == "" || v == "(devel)" {
		v = "dev"
	}
	out := v
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "-dirty"
		}
		out += " (" + rev + ")"
	}
	return out
}

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(e.stdout, versionString())
			return nil
		},
	}
}
