package cache

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// copyDir copies the files under src to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCommittedCacheIsNotTrusted: a repository that ships .agenteval/cache
// with passing verdicts for its ten failing tests, and the key that signed
// them (as hmac.key, where earlier versions kept it, and under the key's
// own name), gets no verdict from it: every entry is rejected, the judge
// is asked, and the cache says it holds a key it does not use.
func TestCommittedCacheIsNotTrusted(t *testing.T) {
	attacker := &Store{Dir: filepath.Join(t.TempDir(), ".agenteval", "cache"), KeyDir: t.TempDir()}
	pass := Wrap(&fixed{content: `{"c1": {"reason": "fine", "passed": true}}`}, "openai:judge", attacker)
	tests := []string{"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"}
	for _, id := range tests {
		pass.Generate(context.Background(), req("judge "+id))
	}
	kp, _ := attacker.KeyPath()
	key, err := os.ReadFile(kp)
	if err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	cacheDir := filepath.Join(project, ".agenteval", "cache")
	copyDir(t, attacker.Dir, cacheDir)
	for _, name := range []string{projectKeyFile, keyFile} {
		os.WriteFile(filepath.Join(cacheDir, name), key, 0o600)
	}

	victim := &Store{Dir: cacheDir, KeyDir: filepath.Join(t.TempDir(), "keys")}
	judge := &fixed{content: `{"c1": {"reason": "wrong", "passed": false}}`}
	m := Wrap(judge, "openai:judge", victim)
	for _, id := range tests {
		r, _ := m.Generate(context.Background(), req("judge "+id))
		if r.Usage.CachedCalls != 0 || strings.Contains(r.Message.Content, "true") {
			t.Errorf("%s: the shipped verdict was served: %+v", id, r)
		}
	}
	if judge.calls.Load() != 10 {
		t.Errorf("the judge was asked %d times, want 10", judge.calls.Load())
	}
	if c := victim.Counts(); c.Rejected != 10 || c.Hits != 0 || !c.ProjectKey {
		t.Errorf("counts = %+v", c)
	}
	// The key is the user's, out of the project, and made for them.
	if kp, _ := victim.KeyPath(); !strings.HasPrefix(kp, victim.KeyDir) {
		t.Errorf("the user's key is %s, not in %s", kp, victim.KeyDir)
	} else if b, err := os.ReadFile(kp); err != nil || string(b) == string(key) {
		t.Errorf("the user's key: %v", err)
	}
	if st, err := victim.Stats(); err != nil || !st.ProjectKey || st.Bad != 0 || st.Entries != 10 {
		t.Errorf("stats after the live replies replaced the entries = %+v, %v", st, err)
	}
	// Clearing the cache removes the key that came with it.
	if _, err := victim.Clear(time.Time{}); err != nil || victim.ProjectKey() {
		t.Errorf("after clear: project key %v, %v", victim.ProjectKey(), err)
	}
}

// TestOwnCacheIsReused: what this user's runs wrote is answered from the
// cache by their next run (a new process, a new Store), and in a copy of
// the project.
func TestOwnCacheIsReused(t *testing.T) {
	keys, dir := t.TempDir(), t.TempDir()
	base := &counter{}
	Wrap(base, "id", &Store{Dir: dir, KeyDir: keys}).Generate(context.Background(), req("hi"))
	again := &Store{Dir: dir, KeyDir: keys}
	if r, _ := Wrap(base, "id", again).Generate(context.Background(), req("hi")); r.Usage.CachedCalls != 1 || base.n.Load() != 1 {
		t.Errorf("rerun: %+v after %d calls", r, base.n.Load())
	}
	moved := t.TempDir()
	copyDir(t, dir, moved)
	copied := &Store{Dir: moved, KeyDir: keys}
	if r, _ := Wrap(base, "id", copied).Generate(context.Background(), req("hi")); r.Usage.CachedCalls != 1 || base.n.Load() != 1 {
		t.Errorf("the same user's copy: %+v after %d calls", r, base.n.Load())
	}
	if c := again.Counts(); c.Rejected != 0 || c.ProjectKey {
		t.Errorf("counts = %+v", c)
	}
}

// TestKeyLivesOutsideTheProject: the key is made in the key folder, 0600
// in a 0700 folder, and nothing key-like is written to the cache folder.
func TestKeyLivesOutsideTheProject(t *testing.T) {
	store := &Store{Dir: t.TempDir(), KeyDir: filepath.Join(t.TempDir(), "agenteval")}
	Wrap(&counter{}, "id", store).Generate(context.Background(), req("hi"))
	if st, err := os.Stat(store.KeyDir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("key folder: %v, %v", st, err)
	}
	p, _ := store.KeyPath()
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 || st.Size() != keySize {
		t.Errorf("key: %v, %v", st, err)
	}
	for _, name := range []string{projectKeyFile, keyFile} {
		if _, err := os.Stat(filepath.Join(store.Dir, name)); err == nil {
			t.Errorf("%s written to the cache folder", name)
		}
	}
}

// TestKeyDirFromEnv: the key folder is $AGENTEVAL_CACHE_KEY_DIR, else
// agenteval in the user's config folder, as the program started: a
// variable set later (by a project's .env) does not move it.
func TestKeyDirFromEnv(t *testing.T) {
	keys := t.TempDir()
	t.Setenv(KeyDirEnv, keys)
	if d, err := keyDirFromEnv(); d != keys || err != nil {
		t.Errorf("with %s: %s, %v", KeyDirEnv, d, err)
	}
	cfg := t.TempDir()
	t.Setenv(KeyDirEnv, "")
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("HOME", cfg)
	want, _ := os.UserConfigDir()
	if d, err := keyDirFromEnv(); d != filepath.Join(want, "agenteval") || err != nil {
		t.Errorf("without: %s, %v", d, err)
	}
	if d, _ := KeyDir(); d != startKeyDir || d == keys || strings.HasPrefix(d, cfg) {
		t.Errorf("KeyDir followed the environment set after start: %s", d)
	}
}
