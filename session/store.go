package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenteval/agenteval/project"
	"github.com/agenteval/agenteval/store"
	"github.com/agenteval/agenteval/suite"
)

// StoreRef is a run store as a command chose it.
type StoreRef struct {
	// Spec is a postgres:// URL, or a SQLite file's path.
	Spec string
	// From says who chose it, for messages; "" for the project's default.
	From string
	// root is the project whose default store this is, when it is.
	root string
}

// IsURL says whether the store is a server's (a URL a backend claims),
// not a file.
func (w StoreRef) IsURL() bool {
	b, ok := store.BackendFor(w.Spec)
	return ok && b.Claims != nil
}

// Name is the store as messages show it: a URL without its password.
func (w StoreRef) Name() string {
	if b, ok := store.BackendFor(w.Spec); ok && b.Display != nil {
		return b.Display(w.Spec)
	}
	return w.Spec
}

// ChooseStore says which store commands use: flag (--store), else
// AGENTEVAL_STORE, else the store: of the project file at root, else the
// project's own SQLite file under root. root is the project's root (see
// project.Root): the eval files' for a run, the working directory's for
// the commands that read the history; "" means the working directory's.
func ChooseStore(flag, root string) (StoreRef, error) {
	if root == "" {
		root = project.Here()
	}
	if flag != "" {
		return checked(StoreRef{Spec: flag, From: "--store"})
	}
	if v := os.Getenv("AGENTEVAL_STORE"); v != "" {
		return checked(StoreRef{Spec: v, From: "AGENTEVAL_STORE"})
	}
	if p := filepath.Join(root, project.FileName); fileExists(p) {
		cfg, err := project.Load(p, suite.Options{})
		if err != nil {
			return StoreRef{}, fmt.Errorf("the project file says where runs are stored: %w", err)
		}
		if cfg.Store != "" {
			w := StoreRef{Spec: cfg.Store, From: p}
			if !w.IsURL() && !filepath.IsAbs(w.Spec) {
				w.Spec = filepath.Join(filepath.Dir(p), w.Spec)
			}
			return checked(w)
		}
	}
	return StoreRef{Spec: project.StorePath(root), root: root}, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// checked refuses what is neither a postgres:// URL nor a plausible path.
func checked(w StoreRef) (StoreRef, error) {
	s := strings.TrimSpace(w.Spec)
	switch {
	case w.IsURL():
		return w, nil
	case strings.Contains(s, "://"):
		scheme, _, _ := strings.Cut(s, "://")
		return w, fmt.Errorf("%s: a store is a postgres:// URL or a SQLite file's path, not a %s:// URL", w.From, scheme)
	case s == "":
		return w, fmt.Errorf("%s is empty: give a postgres:// URL or a SQLite file's path", w.From)
	}
	w.Spec = strings.TrimPrefix(s, "sqlite:")
	return w, nil
}

// Open opens the store, read-only or to record runs. A SQLite store that
// does not exist is created when writing, and an error that says how runs
// get there when reading.
func (w StoreRef) Open(readOnly bool) (store.Store, error) {
	b, ok := store.BackendFor(w.Spec)
	if !ok {
		return nil, fmt.Errorf("no store backend is compiled into this program (import github.com/agenteval/agenteval/store/sqlite)")
	}
	if w.IsURL() {
		db, err := b.Open(w.Spec, readOnly)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return nil, noRuns(fmt.Sprintf("no runs are stored in %s yet: agenteval run --store %s records every run there (or give a results JSONL file)", w.Name(), w.Name()))
			}
			return nil, err
		}
		return db, nil
	}
	if readOnly {
		if _, err := os.Stat(w.Spec); errors.Is(err, os.ErrNotExist) {
			return nil, noRuns(fmt.Sprintf("no runs are stored in %s yet: agenteval run records every run there (or give a results JSONL file)", w.Spec))
		}
	} else if w.From == "" && w.root != "" {
		if err := project.EnsureStateDir(w.root); err != nil {
			return nil, err
		}
	}
	return b.Open(w.Spec, readOnly)
}

// openStore opens the store the options chose, to record runs.
func openStore(flag, root string) (store.Store, StoreRef, error) {
	w, err := ChooseStore(flag, root)
	if err != nil {
		return nil, w, err
	}
	db, err := w.Open(false)
	return db, w, err
}

// noRuns is the error of a store that does not exist yet: it says how runs
// get there, and is a store.ErrNotFound.
type noRuns string

func (e noRuns) Error() string { return string(e) }
func (e noRuns) Unwrap() error { return store.ErrNotFound }
