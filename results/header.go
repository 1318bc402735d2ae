package results

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// RecordRun marks the header record of a results file.
const RecordRun = "run"

// Header is the first line of a results JSONL file: which run wrote it,
// with which suites (and their content hashes), target, judge and
// settings, from which commit. --resume checks it, and the store, compare
// and report show it. Readers skip records whose "record" they don't know.
type Header struct {
	// Record is always "run".
	Record           string    `json:"record"`
	RunID            string    `json:"run_id"`
	AgentevalVersion string    `json:"agenteval_version"`
	Started          time.Time `json:"started"`
	// Command is the subcommand that ran: run, score or regrade.
	Command   string      `json:"command,omitempty"`
	Suites    []SuiteFile `json:"suites"`
	Target    string      `json:"target,omitempty"`
	Judge     string      `json:"judge,omitempty"`
	Simulator string      `json:"simulator,omitempty"`
	// Trials and Threshold are the command line's overrides, when given.
	Trials    int      `json:"trials,omitempty"`
	Threshold *float64 `json:"threshold,omitempty"`
	Git       *Git     `json:"git,omitempty"`
	// Shard is set on the results of one shard of a run (run --shard i/n):
	// n processes, often on n machines, each run a part of the tests
	// under one run id, and merge puts their files together.
	Shard *Shard `json:"shard,omitempty"`
	// Shards is how many shards a merged run was made of.
	Shards int `json:"shards,omitempty"`
	// RegradedFrom is the run whose recorded transcripts this run (command
	// regrade) graded again, without calling the agent.
	RegradedFrom string `json:"regraded_from,omitempty"`
}

// Shard says which part of a run a results file holds.
type Shard struct {
	// Index is the shard's number, from 1 to Count.
	Index int `json:"index"`
	Count int `json:"count"`
	// Tests is how many results the shard is to write, so that a merge
	// can tell a shard that was cut short from a whole one.
	Tests int `json:"tests"`
}

// String is "i/n".
func (s *Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// SuiteFile is one eval file (or dataset) of a run.
type SuiteFile struct {
	Path string `json:"path"`
	// SHA256 is the hex hash of the file's bytes; empty for standard input.
	SHA256 string `json:"sha256,omitempty"`
	// Name is the suite's name as results carry it.
	Name string `json:"name,omitempty"`
}

// Git is the work tree a run started from.
type Git struct {
	Commit string `json:"commit"`
	Dirty  bool   `json:"dirty"`
}

// NewRunID returns a fresh run id: 12 random hex digits, so that a short
// prefix names a run, as with git commits.
func NewRunID() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported platforms; a clock-based
		// id still works if it ever does.
		return fmt.Sprintf("%012x", time.Now().UnixNano()&0xffffffffffff)
	}
	return hex.EncodeToString(b[:])
}

// HashFile returns the hex SHA-256 of a file's bytes.
func HashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// SuiteNames lists the suites' names (or paths, where a suite has no name).
func (h *Header) SuiteNames() []string {
	out := make([]string, 0, len(h.Suites))
	for _, s := range h.Suites {
		if s.Name != "" {
			out = append(out, s.Name)
		} else {
			out = append(out, s.Path)
		}
	}
	return out
}

// TargetNames lists the run's targets. Target names them all, joined by
// ", ", when a run tests several.
func (h *Header) TargetNames() []string {
	if h.Target == "" {
		return nil
	}
	return strings.Split(h.Target, ", ")
}

// RunDiffs says how two headers differ in what makes their results parts
// of one run: the suites (by name and content hash), target, judge,
// --trials and --threshold, and the commit. Shards of a run, and a run
// and its resumption, differ in none of them.
func RunDiffs(a, b *Header) []string {
	var out []string
	if d := suiteDiff(a.Suites, b.Suites); d != "" {
		out = append(out, d)
	}
	if a.Target != b.Target {
		out = append(out, fmt.Sprintf("their targets are %q and %q", a.Target, b.Target))
	}
	if a.Judge != b.Judge {
		out = append(out, fmt.Sprintf("their judges are %q and %q", a.Judge, b.Judge))
	}
	if a.Trials != b.Trials || !sameFloat(a.Threshold, b.Threshold) {
		out = append(out, "they ran with different --trials or --threshold")
	}
	if a.Git != nil && b.Git != nil && a.Git.Commit != b.Git.Commit {
		out = append(out, fmt.Sprintf("they ran from commits %.12s and %.12s", a.Git.Commit, b.Git.Commit))
	}
	return out
}

// suiteDiff says how the suites of two runs differ, by name and content,
// or returns "".
func suiteDiff(a, b []SuiteFile) string {
	byHash := map[string]bool{}
	for _, s := range a {
		byHash[s.Name+"\x00"+s.SHA256] = true
	}
	var other []string
	for _, s := range b {
		if !byHash[s.Name+"\x00"+s.SHA256] {
			other = append(other, s.Path)
		}
	}
	switch {
	case len(other) > 0:
		return fmt.Sprintf("their suites differ (%s: another content or name; the eval files changed between the shards' checkouts)", strings.Join(other, ", "))
	case len(a) != len(b):
		return fmt.Sprintf("they ran %d and %d suites", len(a), len(b))
	}
	return ""
}

func sameFloat(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
