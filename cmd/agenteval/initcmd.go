package main

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
)

// starter is what agenteval init writes: the project file, an eval file
// and a stub agent in Python.
//
//go:embed starter
var starter embed.FS

func newInitCmd(e *env) *cobra.Command {
	var force, noRun bool
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Write a starter project (an eval, a stub agent, agenteval.yaml) and run it offline",
		Long: `Write a working starter into DIR (default: the current folder):

  agenteval.yaml      the project: the agent target, its mock tools, the judge
  evals/support.yaml  a three-turn conversation: tool calls and their
                      arguments on every turn, a rubric, whole-conversation checks
  agent/agent.py      a stub agent in Python speaking the JSON-lines protocol;
                      replace its respond() with a call to your agent
  .gitignore          gets .agenteval/ (run history and cache) and .env (keys)

then run it, offline: the stub agent answers, and a fake judge in this
process passes the rubrics (--fake-judge), so you see a pass at once. Files
that exist are not overwritten unless --force; .gitignore is only added to.
Without python3 the run is a --dry-run instead.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			python := findPython()
			written, err := writeStarter(dir, python, force)
			if err != nil {
				return err
			}
			for _, p := range written {
				fmt.Fprintf(e.stdout, "wrote %s\n", p)
			}
			evals := filepath.Join(dir, "evals")
			next := func() {
				cfg := filepath.Join(dir, "agenteval.yaml")
				steps := [][2]string{
					{"agenteval run " + evals + " --fake-judge", "your agent, a fake judge: this run again"},
					{"export OPENAI_API_KEY=...", "the judge " + cfg + " names (or change it there)"},
					{"agenteval run " + evals, "graded by that judge"},
				}
				width := 0
				for _, s := range steps {
					width = max(width, len(s[0]))
				}
				fmt.Fprintln(e.stdout, "\nNext:")
				for _, s := range steps {
					fmt.Fprintf(e.stdout, "  %-*s  # %s\n", width, s[0], s[1])
				}
				fmt.Fprintf(e.stdout, "Then replace respond() in %s with a call to your agent, or point the\nstub target in %s at your own program (any language; JSON lines on\nstdin and stdout).\n", filepath.Join(dir, "agent", "agent.py"), cfg)
			}
			if noRun {
				next()
				return nil
			}
			argv := []string{evals, "--fake-judge", "--format", "table"}
			switch {
			case e.noExec:
				fmt.Fprintln(e.stdout, "\n--no-exec: the stub agent is a program, so nothing runs; checking the plumbing with --dry-run instead")
				argv = []string{evals, "--dry-run", "--format", "table"}
			case python == "":
				fmt.Fprintln(e.stdout, "\npython3 is not on PATH, and the stub agent is Python: checking the plumbing with --dry-run instead")
				argv = []string{evals, "--dry-run", "--format", "table"}
			default:
				fmt.Fprintf(e.stdout, "\nagenteval run %s\n", strings.Join(argv, " "))
			}
			run := newRunCmd(e)
			run.SetContext(cmd.Context())
			if err := run.ParseFlags(argv); err != nil {
				return err
			}
			err = run.RunE(run, run.Flags().Args())
			next()
			return err
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "overwrite the starter's files where they exist")
	cmd.Flags().BoolVar(&noRun, "no-run", false, "write the files only")
	return cmd
}

// findPython is the Python the stub agent runs with: python3, else python
// (Windows); "" when there is neither.
func findPython() string {
	for _, p := range []string{"python3", "python"} {
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	return ""
}

// writeStarter writes the starter's files into dir and adds .agenteval/ to
// its .gitignore. It refuses, naming them, to overwrite files unless
// force.
func writeStarter(dir, python string, force bool) ([]string, error) {
	if python == "" {
		python = "python3"
	}
	type file struct {
		path string
		data []byte
		mode os.FileMode
	}
	var files []file
	var exist []string
	err := fs.WalkDir(starter, "starter", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := starter.ReadFile(p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, "starter/")
		mode := os.FileMode(0o644)
		if strings.HasSuffix(rel, ".py") {
			mode = 0o755
		}
		if rel == "agenteval.yaml" {
			data = []byte(strings.Replace(string(data), "[PYTHON,", "["+python+",", 1))
		}
		out := filepath.Join(dir, filepath.FromSlash(rel))
		if _, err := os.Stat(out); err == nil {
			exist = append(exist, out)
		}
		files = append(files, file{out, data, mode})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the starter: %w", err)
	}
	if len(exist) > 0 && !force {
		return nil, usageErr("%s already %s; init writes a new project, so pick an empty folder (agenteval init DIR), or pass --force to overwrite", strings.Join(exist, ", "), plural(len(exist), "exists", "exist"))
	}
	var written []string
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			return written, usageErr("%v", err)
		}
		if err := os.WriteFile(f.path, f.data, f.mode); err != nil {
			return written, usageErr("%v", err)
		}
		if runtime.GOOS != "windows" {
			// WriteFile keeps the mode of a file it overwrites.
			os.Chmod(f.path, f.mode)
		}
		written = append(written, f.path)
	}
	gi, err := ignoreState(filepath.Join(dir, ".gitignore"))
	if err != nil {
		return written, usageErr("%v", err)
	}
	if gi != "" {
		written = append(written, gi)
	}
	return written, nil
}

// ignoreState adds .agenteval/ and .env to a .gitignore that lacks them
// (creating the file if need be), and says what it did: "" when nothing
// was needed.
func ignoreState(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return "", err
	}
	hasState, hasEnv := false, false
	for _, line := range strings.Split(string(data), "\n") {
		switch strings.TrimSpace(line) {
		case ".agenteval", ".agenteval/", "/.agenteval", "/.agenteval/":
			hasState = true
		case ".env", "/.env":
			hasEnv = true
		}
	}
	// The run history and cache belong to one machine, and .env holds the
	// project's keys: neither is committed.
	var add, what string
	if !hasState {
		add, what = "# agenteval's run history and cache\n.agenteval/\n", ".agenteval/"
	}
	if !hasEnv {
		add += "# API keys, read by agenteval from the project root\n.env\n"
		what = strings.TrimPrefix(what+" and .env", " and ")
	}
	if add == "" {
		return "", nil
	}
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		add = "\n" + add
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(add); err != nil {
		f.Close()
		return "", err
	}
	return path + " (" + what + " added)", f.Close()
}
