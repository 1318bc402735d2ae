// Package shard splits a run's tests across processes, often on several
// machines, and puts their results back together: which shard runs a
// test (a stable hash of the suite's path and the test's id, with tests
// linked by depends_on kept together), the run id the shards share (from
// the CI system's variables), and the merge of the shards' results files
// into the whole run's, checked for missing and repeated parts and for
// verdicts that are not what their scores give.
//
// It imports the root package, results and the standard library.
package shard

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval"
)

// Spec is one shard of n: Index runs from 1 to Count.
type Spec struct {
	Index, Count int
}

// MaxCount is the most shards a run may be split into.
const MaxCount = 10000

// Parse reads "i/n", as --shard takes it: shard i of n, i from 1 to n.
func Parse(s string) (Spec, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return Spec{}, fmt.Errorf("--shard %q: write i/n, e.g. 1/4 for the first of four shards", s)
	case n < 1 || n > MaxCount:
		return Spec{}, fmt.Errorf("--shard %q: the number of shards must be from 1 to %d", s, MaxCount)
	case i < 1 || i > n:
		return Spec{}, fmt.Errorf("--shard %q: shards are numbered from 1 to %d (on a Kubernetes Indexed Job, whose index starts at 0, pass $((JOB_COMPLETION_INDEX + 1))/%d)", s, n, n)
	}
	return Spec{Index: i, Count: n}, nil
}

func (s Spec) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Of is the shard, from 1 to n, that a test goes to when nothing links it
// to another: a hash of the suite's path and the test's id, the same on
// every machine and in every run. suitePath should be the same on every
// machine too: relative to the project's root, with forward slashes.
//
// The hash is SHA-256 of the path, a zero byte and the id, whose first 8
// bytes, read big-endian, are taken mod n: every bit of it is well mixed,
// where a faster hash's low bits (FNV's) would split ids that differ in one
// character unevenly.
func Of(suitePath, testID string, n int) int {
	h := sha256.New()
	h.Write([]byte(suitePath))
	h.Write([]byte{0})
	h.Write([]byte(testID))
	var sum [sha256.Size]byte
	return int(binary.BigEndian.Uint64(h.Sum(sum[:0]))%uint64(n)) + 1
}

// Assign gives every test of a suite its shard, from 1 to n. Tests
// linked by depends_on, directly or through others, go together, to the
// shard of the first of them (in file order) that depends on no other: a
// test always runs where its dependencies ran, as a run of the whole
// suite would have run it. tests should be all the suite's tests, not a
// filtered part, so that --filter does not move tests between shards.
func Assign(suitePath string, tests []agenteval.Test, n int) map[string]int {
	index := make(map[string]int, len(tests))
	for i := range tests {
		if _, dup := index[tests[i].ID]; !dup {
			index[tests[i].ID] = i
		}
	}
	// Union-find over depends_on.
	parent := make([]int, len(tests))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	hasDeps := make([]bool, len(tests))
	for i := range tests {
		for _, dep := range tests[i].DependsOn {
			j, ok := index[dep]
			if !ok || j == i {
				continue
			}
			hasDeps[i] = true
			a, b := find(i), find(j)
			if a != b {
				parent[max(a, b)] = min(a, b)
			}
		}
	}
	// A group's anchor is its first test without dependencies; a group
	// with none (only a hand-made suite with a cycle) uses its first test.
	anchor := map[int]int{}
	for i := range tests {
		root := find(i)
		if a, ok := anchor[root]; !ok || (hasDeps[a] && !hasDeps[i]) {
			anchor[root] = i
		}
	}
	out := make(map[string]int, len(tests))
	for i := range tests {
		a := anchor[find(i)]
		out[tests[i].ID] = Of(suitePath, tests[a].ID, n)
	}
	return out
}

// Select returns whether a test of the suite belongs to shard s.
func Select(suitePath string, tests []agenteval.Test, s Spec) func(*agenteval.Test) bool {
	if s.Count <= 1 {
		return func(*agenteval.Test) bool { return true }
	}
	where := Assign(suitePath, tests, s.Count)
	return func(t *agenteval.Test) bool { return where[t.ID] == s.Index }
}
