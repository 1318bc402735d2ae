package results

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/google/go-cmp/cmp"
)

func readAll(t *testing.T, in string) (*Reader, []string, error) {
	t.Helper()
	rd := NewReader(strings.NewReader(in), "r.jsonl")
	var ids []string
	for {
		r, err := rd.Next()
		if err == io.EOF {
			return rd, ids, nil
		}
		if err != nil {
			return rd, ids, err
		}
		ids = append(ids, r.TestID)
	}
}

func TestReaderRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	th := 0.7
	h := &Header{RunID: "abc123def456", AgentevalVersion: "dev", Started: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC),
		Suites: []SuiteFile{{Path: "s.yaml", SHA256: "00ff", Name: "s"}}, Target: "replay", Threshold: &th, Git: &Git{Commit: "c0ffee", Dirty: true}}
	if err := w.Start(h); err != nil {
		t.Fatal(err)
	}
	for _, r := range sample() {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), `{"record":"run","run_id":"abc123def456"`) {
		t.Fatalf("the file does not open with the header:\n%s", buf.String())
	}
	rd, ids, err := readAll(t, buf.String())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(h, rd.Header()); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	if want := []string{"ok", "a-rather-long-test-identifier-that-is-clipped", "broken", "half"}; !cmp.Equal(ids, want) {
		t.Errorf("ids = %v, want %v", ids, want)
	}
	if cut, n := rd.Cut(); cut || n != int64(buf.Len()) {
		t.Errorf("Cut = %v, %d; want false, %d", cut, n, buf.Len())
	}
}

func TestReaderSkipsAndCuts(t *testing.T) {
	const head = `{"record":"run","run_id":"r1","suites":[]}` + "\n"
	for _, tc := range []struct {
		name, in string
		ids      []string
		header   bool
		cut      bool
		err      string
	}{
		{name: "no header", in: `{"test_id":"a"}` + "\n" + `{"test_id":"b"}` + "\n", ids: []string{"a", "b"}},
		{name: "unknown records", in: head + `{"record":"metric","x":1}` + "\n" + `{"test_id":"a","output":[{"role":"tool","content":"{\"record\":\"x\"}"}]}` + "\n\n" + `{"record":"result","test_id":"b"}` + "\n", ids: []string{"a", "b"}, header: true},
		{name: "a second header is ignored", in: head + `{"test_id":"a"}` + "\n" + `{"record":"run","run_id":"r2"}` + "\n", ids: []string{"a"}, header: true},
		{name: "cut last line", in: head + `{"test_id":"a"}` + "\n" + `{"test_id":"b","sco`, ids: []string{"a"}, header: true, cut: true},
		{name: "last line without newline", in: head + `{"test_id":"a"}`, ids: []string{"a"}, header: true},
		{name: "broken middle line", in: head + `{"test_id":"a"` + "\n" + `{"test_id":"b"}` + "\n", header: true, err: `r.jsonl:2: not a result`},
		{name: "a dataset", in: `{"id":"x","messages":[]}` + "\n", err: `r.jsonl:1: not a result: the line has no test_id`},
		{name: "empty", in: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd, ids, err := readAll(t, tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !cmp.Equal(ids, tc.ids) {
				t.Errorf("ids = %v, want %v", ids, tc.ids)
			}
			if (rd.Header() != nil) != tc.header {
				t.Errorf("header = %+v", rd.Header())
			}
			cut, n := rd.Cut()
			if cut != tc.cut {
				t.Errorf("cut = %v", cut)
			}
			if tc.cut && n != int64(strings.LastIndex(tc.in, "\n")+1) {
				t.Errorf("whole lines end at %d, want %d", n, strings.LastIndex(tc.in, "\n")+1)
			}
		})
	}
}

func TestReaderNotResultIsMarked(t *testing.T) {
	_, _, err := readAll(t, `{"id":"x"}`+"\n")
	if !errors.Is(err, ErrNotResult) {
		t.Fatalf("err = %v, want ErrNotResult", err)
	}
}

func TestReadResultsFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.jsonl")
	os.WriteFile(p, []byte(`{"record":"run","run_id":"r1"}`+"\n"+`{"test_id":"a","verdict":"pass","score":1}`+"\n"), 0o644)
	var got []*agenteval.Result
	h, err := ReadResults(p, func(r *agenteval.Result) error { got = append(got, r); return nil })
	if err != nil || h == nil || h.RunID != "r1" || len(got) != 1 || got[0].Verdict != agenteval.VerdictPass {
		t.Fatalf("ReadResults = %+v, %v, %v", h, got, err)
	}
	if _, err := ReadResults(filepath.Join(t.TempDir(), "none.jsonl"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

// ReadResults keeps the file's order while decoding in parallel, and stops
// at fn's first error.
func TestReadResultsOrderAndStop(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.jsonl")
	var b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&b, `{"test_id":"t%03d","score":%d}`+"\n", i, i)
	}
	b.WriteString("{broken\n{\"test_id\":\"after\"}\n")
	os.WriteFile(p, []byte(b.String()), 0o644)
	n := 0
	_, err := ReadResults(p, func(r *agenteval.Result) error {
		if r.TestID != fmt.Sprintf("t%03d", n) {
			t.Fatalf("result %d is %s", n, r.TestID)
		}
		n++
		return nil
	})
	if n != 500 || err == nil || !strings.Contains(err.Error(), "r.jsonl:501: not a result") {
		t.Errorf("read %d, err %v; want 500 and the broken line", n, err)
	}
	stop := errors.New("stop")
	n = 0
	if _, err := ReadResults(p, func(*agenteval.Result) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("stopping: n=%d err=%v", n, err)
	}
}
