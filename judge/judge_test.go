package judge

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/cache"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/provider"
	_ "github.com/agenteval/agenteval/provider/openai"
)

func newJudge(t *testing.T) (*Judge, *fakellm.Server) {
	t.Helper()
	s, err := fakellm.Start(fakellm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	m, err := provider.Open(provider.Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: s.URL, APIKey: "k", RetryWait: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return &Judge{Model: m, Name: "openai:gpt-4o-mini"}, s
}

var criteria = []Criterion{{ID: "polite", Text: "The assistant is polite."}, {ID: "booked", Text: "A table was booked."}}

func data() map[string]any {
	return map[string]any{"Transcript": "Human: book\nAI: done", "Output": "", "Reference": ""}
}

func TestDecideOneCallWithOnePropertyPerCriterion(t *testing.T) {
	j, s := newJudge(t)
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{JSON: map[string]any{
		"c1": map[string]any{"reason": "says please", "passed": true},
		"c2": map[string]any{"reason": "no booking tool was called", "passed": false},
	}}})
	ds, usage, err := j.Decide(context.Background(), "rubric", data(), criteria)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || !ds[0].Passed || ds[1].Passed || ds[1].Reason != "no booking tool was called" || ds[0].Criterion.ID != "polite" {
		t.Errorf("decisions = %+v", ds)
	}
	if s.Calls() != 1 || usage.Calls != 1 || usage.InputTokens == 0 {
		t.Errorf("%d calls, usage %+v", s.Calls(), usage)
	}
	req := s.Requests()[0]
	schema := req.ResponseFormat.JSONSchema.Schema
	req0 := schema["required"].([]any)
	if len(req0) != 2 || req0[0] != "c1" || schema["additionalProperties"] != false {
		t.Errorf("schema = %v", schema)
	}
	if *req.Temperature != 0 {
		t.Errorf("temperature = %v", *req.Temperature)
	}
	// The reason comes before the verdict in the schema, so models reason first.
	if !strings.Contains(string(req.Raw), `"properties":{"reason":`) {
		t.Errorf("reason is not the first property: %s", req.Raw)
	}
	if !strings.Contains(req.Messages[1].Text(), `<criterion key="c2" id="`) || !strings.Contains(req.Messages[1].Text(), `">A table was booked.</criterion id="`) {
		t.Errorf("criteria not listed under their keys: %s", req.Messages[1].Text())
	}
}

func TestRepair(t *testing.T) {
	j, s := newJudge(t)
	s.Add(&fakellm.Rule{Times: 1, Reply: fakellm.Reply{Content: "Sure! Both criteria pass."}},
		&fakellm.Rule{Times: 1, Reply: fakellm.Reply{JSON: map[string]any{"c1": map[string]any{"reason": "x", "passed": true}}}},
		&fakellm.Rule{Reply: fakellm.Reply{Content: "```json\n{\"c1\": {\"reason\": \"a\", \"passed\": true}, \"c2\": {\"reason\": \"b\", \"passed\": true}}\n```"}})
	ds, usage, err := j.Decide(context.Background(), "rubric", data(), criteria)
	if err != nil {
		t.Fatal(err)
	}
	if !ds[0].Passed || !ds[1].Passed || s.Calls() != 3 || usage.Calls != 3 {
		t.Errorf("decisions %+v after %d calls (usage %+v)", ds, s.Calls(), usage)
	}
	last := s.Requests()[2]
	if n := len(last.Messages); n != 6 || !strings.Contains(last.Messages[3].Text(), "could not be used: it not JSON") || !strings.Contains(last.Messages[5].Text(), "does not match the schema") {
		t.Errorf("repair conversation: %+v", last.Messages)
	}
}

func TestRepairGivesUp(t *testing.T) {
	j, s := newJudge(t)
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{Content: "I refuse to use JSON."}})
	_, usage, err := j.Decide(context.Background(), "rubric", data(), criteria)
	var ie *InvalidOutputError
	if !errors.As(err, &ie) || ie.Attempts != 3 || s.Calls() != 3 || usage.Calls != 3 {
		t.Fatalf("err = %v after %d calls", err, s.Calls())
	}
	if !strings.Contains(err.Error(), "gave invalid output 3 times") || !strings.Contains(err.Error(), "I refuse to use JSON.") {
		t.Errorf("message = %v", err)
	}
}

func TestVoting(t *testing.T) {
	j, s := newJudge(t)
	j.Samples = 3
	var n atomic.Int64
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{Func: func(r *fakellm.Request) fakellm.Reply {
		k := n.Add(1)
		return fakellm.Reply{JSON: map[string]any{
			"c1": map[string]any{"reason": "r", "passed": true},
			"c2": map[string]any{"reason": "vote " + string(rune('0'+k)), "passed": k == 1},
		}}
	}}})
	ds, usage, err := j.Decide(context.Background(), "rubric", data(), criteria)
	if err != nil {
		t.Fatal(err)
	}
	if !ds[0].Passed || ds[0].Votes != "3/3" || ds[1].Passed || ds[1].Votes != "1/3" || usage.Calls != 3 {
		t.Errorf("decisions = %+v, usage %+v", ds, usage)
	}
	for _, r := range s.Requests() {
		if *r.Temperature != 0.7 {
			t.Errorf("a vote sample ran at temperature %v", *r.Temperature)
		}
	}
}

func TestCache(t *testing.T) {
	j, s := newJudge(t)
	j.Model = cache.Wrap(j.Model, j.Name, &cache.Store{Dir: t.TempDir()})
	if _, u, err := j.Decide(context.Background(), "rubric", data(), criteria); err != nil || u.Calls != 1 {
		t.Fatalf("first: %v %+v", err, u)
	}
	ds, u, err := j.Decide(context.Background(), "rubric", data(), criteria)
	if err != nil || u.Calls != 0 || u.CachedCalls != 1 || s.Calls() != 1 || !ds[0].Passed {
		t.Fatalf("cached rerun: %v usage %+v, %d server calls", err, u, s.Calls())
	}
	d := data()
	d["Transcript"] = "Human: something else"
	if _, u, _ := j.Decide(context.Background(), "rubric", d, criteria); u.Calls != 1 || s.Calls() != 2 {
		t.Errorf("a different call hit the cache: %+v", u)
	}
}

func TestProviderErrorsPassThrough(t *testing.T) {
	j, s := newJudge(t)
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{Fault: fakellm.FaultUnauthorized}})
	_, _, err := j.Decide(context.Background(), "rubric", data(), criteria)
	var fe *agenteval.FatalError
	if !errors.As(err, &fe) {
		t.Errorf("err = %v, want the provider's FatalError", err)
	}
}

// TestFailedCallUsage: a judge call that fails past its retries still
// counts in the usage the judge returns: the call, its retries and waits.
// With samples, a failed one counts beside those that answered.
func TestFailedCallUsage(t *testing.T) {
	for _, tc := range []struct {
		name       string
		samples    int
		maxRetries int
		fail       int // requests answered 500, the first ones
		calls      int
		retries    int
		err        bool
	}{
		{"every attempt fails", 1, 4, 100, 1, 4, true},
		{"one of three samples fails", 3, -1, 1, 3, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, s := newJudge(t)
			m, err := provider.Open(provider.Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: s.URL, APIKey: "k", RetryWait: time.Millisecond, MaxRetries: tc.maxRetries})
			if err != nil {
				t.Fatal(err)
			}
			j.Model, j.Samples = m, tc.samples
			s.Add(&fakellm.Rule{Times: tc.fail, Reply: fakellm.Reply{Fault: fakellm.FaultServer}})
			s.Add(&fakellm.Rule{Reply: fakellm.Reply{JSON: map[string]any{
				"c1": map[string]any{"passed": true, "reason": "r"}, "c2": map[string]any{"passed": true, "reason": "r"}}}})
			_, u, err := j.Decide(context.Background(), "rubric", data(), criteria)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v", err)
			}
			if u.Calls != tc.calls || u.Retries != tc.retries || u.Calls+u.Retries != s.Calls() {
				t.Errorf("usage = %+v for %d requests, want %d calls and %d retries", u, s.Calls(), tc.calls, tc.retries)
			}
		})
	}
}

func TestEveryPromptRenders(t *testing.T) {
	full := map[string]any{
		"Transcript": "Human: hi", "Instructions": "Human: hi", "Output": "", "Reference": "", "Source": "the reference", "Desired": "d", "EndState": "e",
		"Topics": []string{"a"}, "ReferenceTopics": []string{"b"}, "Levels": []KeyedCriterion{{Key: "1", Text: "bad"}},
		"Criteria": []KeyedCriterion{{Key: "c1", Text: "x"}},
		"Task":     "t", "Turn": 1, "Instruction": "i", "Persona": "p", "Closing": "", "Ending": "e",
	}
	names := promptNames()
	if len(names) < 10 {
		t.Fatalf("only %d prompts: %v", len(names), names)
	}
	for _, n := range names {
		p, err := Render(n, full)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if p.System == "" || (n != "goal_compare" && !strings.Contains(p.User, "Human: hi")) {
			t.Errorf("%s rendered to %+v", n, p)
		}
	}
	if _, err := Render("rubric", map[string]any{}); err == nil {
		t.Error("a missing variable was not an error")
	}
}
