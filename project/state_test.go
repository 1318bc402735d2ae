package project

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval/internal/proc"
)

func TestEnsureStateDir(t *testing.T) {
	root := t.TempDir()
	for range 2 { // twice: the second finds it made
		if err := EnsureStateDir(root); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(root, StateDir, ".gitignore"))
	if err != nil || len(b) == 0 {
		t.Fatalf(".gitignore: %q, %v", b, err)
	}
	if StorePath(root) != filepath.Join(root, ".agenteval", "agenteval.db") {
		t.Error(StorePath(root))
	}
}

func TestGitState(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	if GitState(dir) != nil {
		t.Fatal("a folder outside git has a git state")
	}
	run := gitRunner(t, dir)
	run("init", "-q")
	os.WriteFile(filepath.Join(dir, "f"), []byte("1"), 0o644)
	run("add", "f")
	run("commit", "-qm", "one")
	g := GitState(dir)
	if g == nil || len(g.Commit) != 40 || g.Dirty || !g.DirtyKnown {
		t.Fatalf("clean tree: %+v", g)
	}
	// An untracked file leaves the tree clean; a changed tracked one does not.
	os.WriteFile(filepath.Join(dir, "new"), []byte("x"), 0o644)
	if g := GitState(dir); g.Dirty {
		t.Error("an untracked file made the tree dirty")
	}
	os.WriteFile(filepath.Join(dir, "f"), []byte("2"), 0o644)
	if g := GitState(dir); !g.Dirty {
		t.Error("a changed file left the tree clean")
	}
}

// gitRunner runs git in dir for a test's setup, with a name to commit as.
func gitRunner(t *testing.T, dir string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
			"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
}

// The commit is read from the files under .git, as git would resolve it:
// a loose branch, a packed one, a detached HEAD, from a subfolder, and in
// a linked worktree.
func TestGitStateReadsRefs(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	run := gitRunner(t, dir)
	run("init", "-q", "-b", "main")
	if GitState(dir) != nil {
		t.Error("a branch with no commit has a git state")
	}
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "f"), []byte("1"), 0o644)
	run("add", "sub/f")
	run("commit", "-qm", "one")
	first := run("rev-parse", "HEAD")
	check := func(what, in, want string) {
		t.Helper()
		if head := readHead(findGitDir(in)); head != want {
			t.Errorf("%s: read %q, git says %q", what, head, want)
		}
	}
	check("loose", filepath.Join(dir, "sub"), first)
	run("pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "heads", "main")); err == nil {
		t.Fatal("pack-refs left the loose ref")
	}
	check("packed", dir, first)
	os.WriteFile(filepath.Join(dir, "sub", "f"), []byte("2"), 0o644)
	run("commit", "-qam", "two")
	second := run("rev-parse", "HEAD")
	check("loose over packed", dir, second)
	run("checkout", "-q", "--detach", first)
	check("detached", dir, first)
	run("checkout", "-q", "main")
	run("worktree", "add", "-q", "-b", "side", filepath.Join(dir, "wt"), first)
	check("worktree", filepath.Join(dir, "wt"), first)
	check("main beside a worktree", dir, second)
	// A HEAD that points outside refs/ is not followed.
	os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("ref: ../../etc/passwd\n"), 0o644)
	check("escape", dir, "")
}

// A cloned or downloaded repository must not run a command through the
// git agenteval starts: not from its .git/config (core.fsmonitor, a filter
// driver), nor from the environment a project's .env can set (GIT_CONFIG_*
// adding configuration). Under --no-exec no git runs at all, and the
// commit is still known.
func TestGitStateRunsNothingOfTheRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the traps are shell commands")
	}
	dir := t.TempDir()
	run := gitRunner(t, dir)
	run("init", "-q")
	os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("data.txt filter=evil\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "data.txt"), []byte("same\n"), 0o644)
	run("add", ".gitattributes", "data.txt")
	run("commit", "-qm", "one")
	commit := run("rev-parse", "HEAD")
	// Armed only now, so that the setup's own git commands do not fire them.
	marker := func(n string) string { return filepath.Join(dir, "marker-"+n) }
	run("config", "core.fsmonitor", "touch "+marker("fsmonitor"))
	run("config", "filter.evil.clean", "touch "+marker("filter")+"; cat")
	run("config", "filter.evil.required", "true")
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
	t.Setenv("GIT_CONFIG_VALUE_0", "touch "+marker("env"))
	// The same bytes, a new timestamp: status reads the file through the
	// clean filter to tell.
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(dir, "data.txt"), later, later)
	noMarkers := func() {
		t.Helper()
		for _, n := range []string{"fsmonitor", "filter", "env"} {
			if _, err := os.Stat(marker(n)); err == nil {
				t.Errorf("the repository ran its %s command", n)
			}
		}
	}
	g := GitState(dir)
	noMarkers()
	if g == nil || g.Commit != commit || !g.DirtyKnown || g.Dirty {
		t.Errorf("state %+v, want commit %s, known clean", g, commit)
	}

	// The traps are real: git run as a user would run it fires them (the
	// environment's core.fsmonitor would hide the repository's, so once
	// without it and once with it).
	for _, traps := range [][]string{{"fsmonitor", "filter"}, {"env"}} {
		cmd := exec.Command("git", "status", "--porcelain")
		cmd.Dir = dir
		for _, kv := range os.Environ() {
			if traps[0] == "env" || !strings.HasPrefix(kv, "GIT_CONFIG_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Run()
		os.Chtimes(filepath.Join(dir, "data.txt"), later, later)
		for _, n := range traps {
			if _, err := os.Stat(marker(n)); err != nil {
				t.Errorf("the %s trap did not fire for plain git status, so the test shows nothing", n)
			}
			os.Remove(marker(n))
		}
	}

	// Under --no-exec no git runs: a git first on the PATH would say so.
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\n: > "+marker("git")+"\n"), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	proc.Refuse("--no-exec")
	t.Cleanup(func() { proc.Refuse("") })
	g = GitState(dir)
	if _, err := os.Stat(marker("git")); err == nil {
		t.Error("git ran under --no-exec")
	}
	if g == nil || g.Commit != commit || g.DirtyKnown || g.Dirty {
		t.Errorf("state under --no-exec %+v, want commit %s, dirty unknown", g, commit)
	}
}

// git gets an environment of its own: nothing a project's .env set (which
// is in this process's environment) reaches it.
func TestGitEnv(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake git is a shell script")
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".git", "refs", "heads"), 0o755)
	os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".git", "refs", "heads", "main"), []byte(strings.Repeat("ab", 20)+"\n"), 0o644)
	bin := t.TempDir()
	envFile := filepath.Join(dir, "env.txt")
	os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\nexport -p >> "+envFile+"\necho \"$@\" >> "+envFile+"\n"), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("LD_PRELOAD", "/nonexistent.so")
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_DIR", filepath.Join(dir, "nowhere"))
	t.Setenv("OPENAI_API_KEY", "sk-not-for-git")
	g := GitState(dir)
	if g == nil || g.Commit != strings.Repeat("ab", 20) || !g.DirtyKnown {
		t.Fatalf("state %+v", g)
	}
	b, _ := os.ReadFile(envFile)
	got := string(b)
	for _, bad := range []string{"LD_PRELOAD", "GIT_CONFIG_COUNT", "GIT_DIR", "OPENAI_API_KEY", "sk-not-for-git"} {
		if strings.Contains(got, bad) {
			t.Errorf("git got %s:\n%s", bad, got)
		}
	}
	for _, want := range []string{"GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "core.fsmonitor=false", "core.hooksPath=" + os.DevNull, "--ignore-submodules=dirty"} {
		if !strings.Contains(got, want) {
			t.Errorf("git ran without %s:\n%s", want, got)
		}
	}
}
