package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/agenteval/agenteval/project"
	"github.com/agenteval/agenteval/session"
	"github.com/agenteval/agenteval/store"
	"github.com/agenteval/agenteval/view"
	"github.com/spf13/cobra"
)

func newViewCmd(e *env) *cobra.Command {
	var port int
	var host string
	cmd := &cobra.Command{
		Use:   "view [--port N] [--host ADDR]",
		Short: "Browse the stored runs in a local web viewer, read-only",
		Long: `Serve the project's run store to your browser: the list of runs, each run as
the HTML report (filter, search, each test as a conversation with the
judge's reasons), a run in progress followed live, and two runs picked to
compare side by side. Nothing is written and nothing leaves the machine.

It listens on 127.0.0.1 only, unless --host says otherwise: then anyone who
can reach the address can read every transcript in the store.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runView(cmd.Context(), e, host, port) },
	}
	cmd.Flags().IntVar(&port, "port", 8765, "port to listen on (0: any free port)")
	cmd.Flags().StringVar(&host, "host", "127.0.0.1", "address to listen on; anything but loopback exposes the store to the network")
	return cmd
}

func runView(ctx context.Context, e *env, host string, port int) error {
	if port < 0 || port > 65535 {
		return usageErr("--port %d is not a port number", port)
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
	defer db.Close()
	ip := net.ParseIP(host)
	loopback := host == "localhost" || (ip != nil && ip.IsLoopback())
	if !loopback {
		fmt.Fprintf(e.stderr, "agenteval: warning: serving on %s, not loopback: anyone who can reach it can read every run and transcript in %s\n", host, path)
	}
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
		Handler:           (&view.Server{Store: db, AllowAnyHost: !loopback}).Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	fmt.Fprintf(e.stdout, "agenteval view: http://%s/ (runs from %s; Ctrl-C stops)\n", ln.Addr(), path)
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
