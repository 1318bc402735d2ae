package target

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/dataset"
	"github.com/agenteval/agenteval/results"
)

// ReplayAgent answers from recorded conversations instead of a live agent,
// for re-grading a run with new assertions, and for demos. Recordings are
// JSONL: results files written by agenteval run (test_id and output; the
// run header is skipped), or rows with id and messages. For turn N of a test, it returns what the
// recorded assistant said after the recording's N-th user message, and it
// checks that the user messages agree.
type ReplayAgent struct {
	File       string
	recordings map[string]agenteval.Conversation
}

// OpenReplay loads a recordings file.
func OpenReplay(path string) (*ReplayAgent, error) {
	rd, closeFile, err := results.OpenResults(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer closeFile()
	a := &ReplayAgent{File: path, recordings: map[string]agenteval.Conversation{}}
	for {
		line, text, err := rd.NextRow()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		var row struct {
			TestID   string          `json:"test_id"`
			ID       string          `json:"id"`
			Output   json.RawMessage `json:"output"`
			Messages json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(text, &row); err != nil {
			return nil, fmt.Errorf("%s:%d: not a JSON object: %v", path, line, err)
		}
		id, raw := row.TestID, row.Output
		if id == "" {
			id = row.ID
		}
		if len(raw) == 0 {
			raw = row.Messages
		}
		if id == "" || len(raw) == 0 {
			return nil, fmt.Errorf("%s:%d: a recording needs test_id (or id) and output (or messages)", path, line)
		}
		conv, err := dataset.DecodeMessages(raw)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		if _, dup := a.recordings[id]; !dup {
			a.recordings[id] = conv
		}
	}
	return a, nil
}

// testIDOf is the test a request's conversation runs: the request says,
// or, from a caller that does not, its conversation id is "test-id#trial".
// The runner's ids are not parsed: they start with the run, the target
// and the suite, whose names may hold any character.
func testIDOf(req *agenteval.AgentRequest) string {
	if req.TestID != "" {
		return req.TestID
	}
	if i := strings.LastIndexByte(req.ConversationID, '#'); i >= 0 {
		return req.ConversationID[:i]
	}
	return req.ConversationID
}

// Respond replays one turn.
func (a *ReplayAgent) Respond(_ context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
	id := testIDOf(req)
	rec, ok := a.recordings[id]
	if !ok {
		return nil, fmt.Errorf("replay %s has no recording of test %q", a.File, id)
	}
	// The request's n-th user message is the recording's n-th: a test's
	// input may hold earlier exchanges, so the turn number alone does not
	// say where in the recording this reply is.
	n := 0
	for _, m := range req.Messages {
		if m.Role == agenteval.RoleUser {
			n++
		}
	}
	at, seen := -1, 0
	for i, m := range rec {
		if m.Role == agenteval.RoleUser {
			if seen++; seen == n {
				at = i
				break
			}
		}
	}
	if at < 0 {
		return nil, fmt.Errorf("replay %s: test %q was recorded with %d user messages; turn %d (user message %d) has no recording", a.File, id, seen, req.Turn, n)
	}
	want := rec[at].Content
	if got := lastUser(req.Messages); strings.TrimSpace(got) != strings.TrimSpace(want) {
		return nil, fmt.Errorf("replay %s: test %q turn %d was recorded for the user message %q, not %q", a.File, id, req.Turn, snippet(want), snippet(got))
	}
	end := at + 1
	for end < len(rec) && rec[end].Role != agenteval.RoleUser {
		end++
	}
	reply := append(agenteval.Conversation(nil), rec[at+1:end]...)
	if err := checkReply(reply); err != nil {
		return nil, fmt.Errorf("replay %s: test %q turn %d: %v", a.File, id, req.Turn, err)
	}
	return &agenteval.AgentResponse{Messages: reply}, nil
}

func lastUser(c agenteval.Conversation) string {
	for i := len(c) - 1; i >= 0; i-- {
		if c[i].Role == agenteval.RoleUser {
			return c[i].Content
		}
	}
	return ""
}
