package sqlite

import (
	"os"
	"path/filepath"
	"testing"
)

// The store holds transcripts, so only its owner may read it, as with the
// judge cache; a store made 0644 before is narrowed when opened to write.
func TestStoreIsPrivate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state", "agenteval.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, p := range []string{path, filepath.Dir(path)} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %v, want no access for group or others", p, st.Mode().Perm())
		}
	}
	old := filepath.Join(dir, "old.db")
	if err := os.WriteFile(old, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(old, Options{}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if st, _ := os.Stat(old); st.Mode().Perm() != 0o600 {
		t.Errorf("an older store stays %v, want 0600", st.Mode().Perm())
	}
}
