package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestViewStoreOnlyInProjects checks where view may make an empty store to
// wait for the first run: in a project's folder, and nowhere else.
func TestViewStoreOnlyInProjects(t *testing.T) {
	t.Setenv("AGENTEVAL_STORE", "")
	for _, tc := range []struct {
		name    string
		files   []string // made empty; a name ending in / is a folder
		project bool
	}{
		{"empty folder", nil, false},
		{"project file", []string{"agenteval.yaml"}, true},
		{"git root with evals", []string{".git/", "evals/"}, true},
		{"git root without evals", []string{".git/"}, false},
		{"evals without git", []string{"evals/"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				p := filepath.Join(dir, f)
				var err error
				if strings.HasSuffix(f, "/") {
					err = os.MkdirAll(p, 0o755)
				} else {
					err = os.WriteFile(p, nil, 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			t.Chdir(dir)
			var out, errs strings.Builder
			// A cancelled context: view returns as soon as it listens.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			err := runView(ctx, newEnv(strings.NewReader(""), &out, &errs), viewOptions{host: "127.0.0.1"})
			_, statErr := os.Stat(filepath.Join(dir, ".agenteval", "agenteval.db"))
			if tc.project {
				if err != nil || statErr != nil {
					t.Fatalf("in a project view should make the store and wait: %v; store: %v", err, statErr)
				}
				return
			}
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), "no runs are stored in") {
				t.Fatalf("view outside a project: %v, want exit %d saying no runs are stored", err, exitUsage)
			}
			if _, err := os.Stat(filepath.Join(dir, ".agenteval")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("view outside a project left .agenteval behind (%v)", err)
			}
		})
	}
}
