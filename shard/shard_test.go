package shard

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Spec
		err  string
	}{
		{"1/4", Spec{1, 4}, ""},
		{" 4 / 4 ", Spec{4, 4}, ""},
		{"1/1", Spec{1, 1}, ""},
		{"0/4", Spec{}, "JOB_COMPLETION_INDEX + 1"},
		{"5/4", Spec{}, "from 1 to 4"},
		{"1/0", Spec{}, "from 1 to 10000"},
		{"2", Spec{}, "write i/n"},
		{"a/b", Spec{}, "write i/n"},
		{"", Spec{}, "write i/n"},
	} {
		got, err := Parse(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q) = %v, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// The assignment is part of the contract between machines and versions:
// shards run by two versions of agenteval must split a suite alike. These
// values (the first 8 bytes of SHA-256 of "path\x00id", mod n, + 1) must
// never change.
func TestOfIsStable(t *testing.T) {
	want := map[string]int{"c0": 4, "c1": 1, "c2": 1, "c3": 3, "c4": 2, "c5": 3, "c6": 2, "c7": 3}
	for id, w := range want {
		if got := Of("load.yaml", id, 4); got != w {
			t.Errorf("Of(load.yaml, %s, 4) = %d, want %d", id, got, w)
		}
	}
	if got := Of("evals/support.yaml", "refund-flow", 7); got != 3 {
		t.Errorf("Of(evals/support.yaml, refund-flow, 7) = %d, want 3", got)
	}
}

func tests(spec string) []agenteval.Test {
	// "a b>a c>b d e>d,a" : id, then > and its dependencies.
	var out []agenteval.Test
	for _, f := range strings.Fields(spec) {
		id, deps, _ := strings.Cut(f, ">")
		t := agenteval.Test{ID: id}
		if deps != "" {
			t.DependsOn = strings.Split(deps, ",")
		}
		out = append(out, t)
	}
	return out
}

func TestAssignKeepsChainsTogether(t *testing.T) {
	ts := tests("a b>a c>b d e>d f g>f,h h i j>missing")
	for n := 1; n <= 7; n++ {
		got := Assign("s.yaml", ts, n)
		for _, group := range [][]string{{"a", "b", "c"}, {"d", "e"}, {"f", "g", "h"}} {
			for _, id := range group[1:] {
				if got[id] != got[group[0]] {
					t.Errorf("n=%d: %s on shard %d, %s on %d; want together", n, id, got[id], group[0], got[group[0]])
				}
			}
		}
		// A chain goes where its first test without dependencies goes.
		if got["a"] != Of("s.yaml", "a", n) || got["d"] != Of("s.yaml", "d", n) || got["h"] != Of("s.yaml", "f", n) {
			t.Errorf("n=%d: chains not anchored at their first root: %v", n, got)
		}
		// A dependency outside the suite links nothing.
		if got["j"] != Of("s.yaml", "j", n) || got["i"] != Of("s.yaml", "i", n) {
			t.Errorf("n=%d: free tests moved: %v", n, got)
		}
		for id, s := range got {
			if s < 1 || s > n {
				t.Errorf("n=%d: %s on shard %d", n, id, s)
			}
		}
	}
}

// Every test lands on exactly one shard, and the shards are balanced
// enough for a large suite.
func TestSelectPartitions(t *testing.T) {
	var ts []agenteval.Test
	for i := range 2000 {
		ts = append(ts, agenteval.Test{ID: fmt.Sprintf("test-%d", i)})
	}
	const n = 4
	count := make([]int, n+1)
	for i := 1; i <= n; i++ {
		sel := Select("evals/big.yaml", ts, Spec{i, n})
		for j := range ts {
			if sel(&ts[j]) {
				count[i]++
			}
		}
	}
	total := 0
	for i := 1; i <= n; i++ {
		total += count[i]
		if count[i] < 400 || count[i] > 600 {
			t.Errorf("shard %d has %d of 2000 tests", i, count[i])
		}
	}
	if total != len(ts) {
		t.Errorf("shards hold %d tests, want %d", total, len(ts))
	}
	// The same split every time, and another for another path.
	a, b := Assign("evals/big.yaml", ts, n), Assign("evals/big.yaml", ts, n)
	other := Assign("evals/other.yaml", ts, n)
	moved := 0
	for id := range a {
		if a[id] != b[id] {
			t.Fatalf("%s moved between two assignments", id)
		}
		if a[id] != other[id] {
			moved++
		}
	}
	if moved < 1000 {
		t.Errorf("another suite path moved only %d of 2000 tests", moved)
	}
}

func TestRunIDFromCI(t *testing.T) {
	for _, tc := range []struct {
		env          map[string]string
		want, system string
	}{
		{map[string]string{"GITHUB_RUN_ID": "9876543210", "GITHUB_RUN_ATTEMPT": "2"}, "gh-9876543210-2", "GitHub Actions"},
		{map[string]string{"GITHUB_RUN_ID": "42"}, "gh-42", "GitHub Actions"},
		{map[string]string{"CI_PIPELINE_ID": "1234"}, "gl-1234", "GitLab CI"},
		{map[string]string{"BUILDKITE_BUILD_ID": "0190c1a2-aaaa"}, "bk-0190c1a2-aaaa", "Buildkite"},
		{map[string]string{"CIRCLE_WORKFLOW_ID": "a-b-c"}, "circle-a-b-c", "CircleCI"},
		{map[string]string{"BUILD_BUILDID": "77"}, "azure-77", "Azure Pipelines"},
		{map[string]string{"BUILD_TAG": "jenkins-my job/main-12"}, "jenkins-my-job-main-12", "Jenkins"},
		{map[string]string{"CI": "true"}, "", ""},
	} {
		id, sys := RunIDFromCI(func(k string) string { return tc.env[k] })
		if id != tc.want || sys != tc.system {
			t.Errorf("%v: %q, %q; want %q, %q", tc.env, id, sys, tc.want, tc.system)
		}
	}
	if got := CleanRunID(strings.Repeat("x", 70) + "/é"); len(got) != 64 || strings.ContainsAny(got, "/é") {
		t.Errorf("CleanRunID = %q", got)
	}
}
