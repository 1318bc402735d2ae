package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agenteval/agenteval/internal/proc"
	"github.com/agenteval/agenteval/project"
	"github.com/agenteval/agenteval/session"
	"github.com/agenteval/agenteval/store"
	"github.com/agenteval/agenteval/view"
	"github.com/spf13/cobra"
)

// viewOptions are view's flags.
type viewOptions struct {
	host string
	port int
	// as is --as: who labels; asSet says it was given.
	as    string
	asSet bool
}

func newViewCmd(e *env) *cobra.Command {
	var o viewOptions
	cmd := &cobra.Command{
		Use:   "view [--port N] [--host ADDR] [--as NAME]",
		Short: "Browse the stored runs in a local web viewer, and label the judge's verdicts",
		Long: `Serve the project's run store to your browser: the list of runs, each run as
the HTML report (filter, search, each test as a conversation with the
judge's reasons), a run in progress followed live, and two runs picked to
compare side by side. Nothing leaves the machine.

On a run's page, each criterion a judge decided has agree and disagree
buttons and a note: that is a label, a person's verdict beside the
judge's, kept in the store for agenteval calibrate. Labels carry your name:
git config user.name, or --as NAME (under --no-exec git is not asked). The
top of the page counts the criteria labelled and how many agree with the
judge. Labels are the only thing the viewer writes, and only pages it
served in this session can write them.

It listens on 127.0.0.1 only, unless --host says otherwise: then anyone who
can reach the address can read every transcript in the store, and labels
cannot be written.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.asSet = cmd.Flags().Changed("as")
			return runView(cmd.Context(), e, o)
		},
	}
	cmd.Flags().IntVar(&o.port, "port", 8765, "port to listen on (0: any free port)")
	cmd.Flags().StringVar(&o.host, "host", "127.0.0.1", "address to listen on; anything but loopback exposes the store to the network, and labels cannot be written")
	cmd.Flags().StringVar(&o.as, "as", "", "the name your labels carry (default: git config user.name)")
	return cmd
}

func runView(ctx context.Context, e *env, o viewOptions) error {
	host, port := o.host, o.port
	if port < 0 || port > 65535 {
		return usageErr("--port %d is not a port number", port)
	}
	labeller, err := viewLabeller(e, o)
	if err != nil {
		return err
	}
	w, err := session.ChooseStore(e.storeFlag, "")
	if err != nil {
		return usageErr("%v", err)
	}
	path := w.Name()
	db, err := w.Open(true)
	if err != nil && errors.Is(err, store.ErrNotFound) && !isProject(project.Here()) {
		// Waiting for a first run makes sense where runs are started;
		// anywhere else it would only leave an empty store behind.
		return usageErr("%v", noStoreYet(w))
	}
	if err != nil && (errors.Is(err, store.ErrNotFound) || !w.IsURL()) {
		// An empty store, so the viewer can wait for the first run.
		if rw, werr := w.Open(false); werr == nil {
			rw.Close()
			db, err = w.Open(true)
		}
	}
	if err != nil {
		return usageErr("%v", err)
	}
	ip := net.ParseIP(host)
	loopback := host == "localhost" || (ip != nil && ip.IsLoopback())
	if !loopback {
		fmt.Fprintf(e.stderr, "agenteval: warning: serving on %s, not loopback: anyone who can reach it can read every run and transcript in %s; labels cannot be written\n", host, path)
	}
	// Labels are written through a viewer on loopback only, into the store
	// opened for writing; a store that cannot be is shown all the same.
	readOnly := ""
	if loopback {
		if rw, werr := w.Open(false); werr == nil {
			db.Close()
			db = rw
		} else {
			readOnly = fmt.Sprintf("the store cannot be opened for writing (%v)", werr)
			fmt.Fprintf(e.stderr, "agenteval: warning: labels cannot be written: %s\n", readOnly)
		}
	}
	defer db.Close()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return usageErr("port %d is in use; pick another with --port N (--port 0 takes any free one)", port)
		}
		return usageErr("listen on %s: %v", net.JoinHostPort(host, strconv.Itoa(port)), err)
	}
	// Live pages hold a request open; stopping ends them through this.
	base, stop := context.WithCancel(context.Background())
	defer stop()
	srv := &http.Server{
		Handler:           (&view.Server{Store: db, AllowAnyHost: !loopback, Labeller: labeller, ReadOnly: readOnly}).Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	fmt.Fprintf(e.stdout, "agenteval view: http://%s/ (runs from %s; Ctrl-C stops)\n", ln.Addr(), path)
	if loopback && readOnly == "" {
		if labeller == "" {
			fmt.Fprintln(e.stdout, "labels: unnamed (set git config user.name, or pass --as NAME)")
		} else {
			fmt.Fprintf(e.stdout, "labels: as %s\n", labeller)
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		stop()
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shut)
		return nil
	}
}

// isProject reports whether root is a folder runs are started from: it
// holds agenteval.yaml, or it is a git work tree's root with an evals
// folder (what agenteval init makes).
func isProject(root string) bool {
	if st, err := os.Stat(filepath.Join(root, project.FileName)); err == nil && !st.IsDir() {
		return true
	}
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		return false
	}
	st, err := os.Stat(filepath.Join(root, "evals"))
	return err == nil && st.IsDir()
}

// maxLabeller is the longest name a label may carry, in characters.
const maxLabeller = 100

// viewLabeller is the name labels carry: --as, else git config user.name
// (not asked under --no-exec, which runs no program), else none.
func viewLabeller(e *env, o viewOptions) (string, error) {
	if o.asSet {
		name := strings.TrimSpace(o.as)
		if err := checkLabeller(name); err != nil {
			return "", usageErr("--as %q: %v", o.as, err)
		}
		return name, nil
	}
	if e.noExec {
		return "", nil
	}
	name := gitUserName(e.root)
	if checkLabeller(name) != nil {
		return "", nil
	}
	return name, nil
}

// checkLabeller says what is wrong with a labeller's name.
func checkLabeller(name string) error {
	if n := utf8.RuneCountInString(name); n > maxLabeller {
		return fmt.Errorf("a name is at most %d characters, not %d", maxLabeller, n)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Errorf("a name has no control characters")
		}
	}
	return nil
}

// gitUserName asks git for user.name, as the person's commits carry it,
// or returns "" when git is missing or has none. Git gets only what it
// needs to find the person's configuration: none of the project's .env.
func gitUserName(dir string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd, err := proc.Command(ctx, []string{"git", "--no-pager", "config", "--get", "user.name"})
	if err != nil {
		return ""
	}
	if dir != "" {
		cmd.Dir = dir
	}
	cmd.Env = []string{"LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0"}
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "USERPROFILE", "HOMEDRIVE", "HOMEPATH", "SYSTEMROOT", "WINDIR", "PATH"} {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	if proc.Run(cmd) != nil {
		return ""
	}
	return strings.TrimSpace(out.String())
}
