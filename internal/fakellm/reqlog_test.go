package fakellm

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines(t *testing.T) []LogEntry {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []LogEntry
	for _, line := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		var e LogEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}

// TestRequestLog: each request is one line, written by the time its answer
// arrives, with its tag (path, header, or the server's), the messages as
// text, the tools, the response format and the reply or error.
func TestRequestLog(t *testing.T) {
	var buf syncBuffer
	s, err := Start(Options{Log: &buf, Tag: "default", NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Add(&Rule{Match: Contains("fail me"), Reply: Reply{Status: 400, ErrorMessage: "bad request"}})
	base := strings.TrimSuffix(s.URL, "/v1")
	tests := []struct {
		name, path, header, body string
		want                     LogEntry
	}{
		{
			name: "tag from the path",
			path: "/t/av.3/v1/chat/completions",
			body: `{"model":"fake-agent","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":[{"type":"text","text":"Hi "},{"type":"text","text":"there"}]}],"tools":[{"type":"function","function":{"name":"lookup"}}]}`,
			want: LogEntry{Tag: "av.3", Path: "/t/av.3/v1/chat/completions", Model: "fake-agent", Status: 200,
				Messages: []LogMessage{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi there"}},
				Tools:    []string{"lookup"}, Reply: LogReply{Content: "This is a fake reply."}},
		},
		{
			name: "tag from the header, structured output",
			path: "/v1/chat/completions", header: "ae.3",
			body: `{"model":"fake-judge","messages":[{"role":"user","content":"judge"}],"response_format":{"type":"json_schema","json_schema":{"name":"verdict","schema":{"type":"object","properties":{"pass":{"type":"boolean"}}}}}}`,
			want: LogEntry{Tag: "ae.3", Path: "/v1/chat/completions", Model: "fake-judge", Status: 200, ResponseFormat: "json_schema", Schema: "verdict",
				Messages: []LogMessage{{Role: "user", Content: "judge"}}, Reply: LogReply{Content: `{"pass":true}`}},
		},
		{
			name: "the server's tag, an error",
			path: "/chat/completions",
			body: `{"model":"m","messages":[{"role":"user","content":"fail me"}]}`,
			want: LogEntry{Tag: "default", Path: "/chat/completions", Model: "m", Status: 400,
				Messages: []LogMessage{{Role: "user", Content: "fail me"}}, Reply: LogReply{Error: "bad request"}},
		},
	}
	for i, tt := range tests {
		req, _ := http.NewRequest("POST", base+tt.path, strings.NewReader(tt.body))
		req.Header.Set("User-Agent", "test-client")
		if tt.header != "" {
			req.Header.Set(TagHeader, tt.header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		resp.Body.Close()
		lines := buf.lines(t)
		if len(lines) != i+1 {
			t.Fatalf("%s: %d log lines once answered, want %d", tt.name, len(lines), i+1)
		}
		got := lines[i]
		if got.Time.IsZero() || got.Client != "test-client" {
			t.Errorf("%s: time %v, client %q", tt.name, got.Time, got.Client)
		}
		got.Time, got.Client = tt.want.Time, ""
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(tt.want)
		if !bytes.Equal(gb, wb) {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, gb, wb)
		}
	}
}
