package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenteval/agenteval/project"
	"github.com/agenteval/agenteval/store"
	"github.com/agenteval/agenteval/store/postgres"
	"github.com/agenteval/agenteval/store/sqlite"
	"github.com/agenteval/agenteval/suite"
)

// storeHelp says where runs are recorded, for the commands' help.
const storeHelp = `Runs are recorded in the project's store: --store, else $AGENTEVAL_STORE,
else store: in agenteval.yaml, else .agenteval/agenteval.db in the project's
root (the folder of agenteval.yaml, else the git root, else the working
directory). A store is a SQLite file's path or a postgres:// URL, which
several machines share (the shards of a run, a team's CI and laptops).`

// where is a store as a command chose it.
type where struct {
	// spec is a postgres:// URL, or a SQLite file's path.
	spec string
	// from says who chose it, for messages; "" for the project's default.
	from string
}

func (w where) postgres() bool { return postgres.IsURL(w.spec) }

// name is the store as messages show it: a URL without its password.
func (w where) name() string {
	if w.postgres() {
		return postgres.Name(w.spec)
	}
	return w.spec
}

// chooseStore says which store commands use: --store, else
// AGENTEVAL_STORE, else the project file's store:, else the project's
// SQLite file.
func chooseStore(flag string) (where, error) {
	if flag != "" {
		return checked(where{spec: flag, from: "--store"})
	}
	if v := os.Getenv("AGENTEVAL_STORE"); v != "" {
		return checked(where{spec: v, from: "AGENTEVAL_STORE"})
	}
	if p, err := project.Find("."); err == nil && p != "" {
		cfg, err := project.Load(p, suite.Options{})
		if err != nil {
			return where{}, fmt.Errorf("the project file says where runs are stored: %w", err)
		}
		if cfg.Store != "" {
			w := where{spec: cfg.Store, from: p}
			if !w.postgres() && !filepath.IsAbs(w.spec) {
				w.spec = filepath.Join(filepath.Dir(p), w.spec)
			}
			return checked(w)
		}
	}
	return where{spec: project.StorePath(project.Here())}, nil
}

// checked refuses what is neither a postgres:// URL nor a plausible path.
func checked(w where) (where, error) {
	s := strings.TrimSpace(w.spec)
	switch {
	case w.postgres():
		return w, nil
	case strings.Contains(s, "://"):
		scheme, _, _ := strings.Cut(s, "://")
		return w, fmt.Errorf("%s: a store is a postgres:// URL or a SQLite file's path, not a %s:// URL", w.from, scheme)
	case s == "":
		return w, fmt.Errorf("%s is empty: give a postgres:// URL or a SQLite file's path", w.from)
	}
	w.spec = strings.TrimPrefix(s, "sqlite:")
	return w, nil
}

// open opens the store, read-only or to record runs. A SQLite store that
// does not exist is created when writing, and an error that says how runs
// get there when reading.
func (w where) open(readOnly bool) (store.Store, error) {
	if w.postgres() {
		db, err := postgres.Open(w.spec, postgres.Options{ReadOnly: readOnly})
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return nil, noRuns(fmt.Sprintf("no runs are stored in %s yet: agenteval run --store %s records every run there (or give a results JSONL file)", w.name(), w.name()))
			}
			return nil, err
		}
		return db, nil
	}
	if readOnly {
		if _, err := os.Stat(w.spec); errors.Is(err, os.ErrNotExist) {
			return nil, noRuns(fmt.Sprintf("no runs are stored in %s yet: agenteval run records every run there (or give a results JSONL file)", w.spec))
		}
	} else if w.from == "" {
		if err := project.EnsureStateDir(project.Here()); err != nil {
			return nil, err
		}
	}
	db, err := sqlite.Open(w.spec, sqlite.Options{ReadOnly: readOnly})
	if err != nil {
		return nil, err
	}
	return db, nil
}

// openStore opens the store the command line chose, to record runs.
func (e *env) openStore() (store.Store, where, error) {
	w, err := chooseStore(e.storeFlag)
	if err != nil {
		return nil, w, err
	}
	db, err := w.open(false)
	return db, w, err
}

// noRuns is the error of a store that does not exist yet: it says how runs
// get there, and is a store.ErrNotFound.
type noRuns string

func (e noRuns) Error() string { return string(e) }
func (e noRuns) Unwrap() error { return store.ErrNotFound }
