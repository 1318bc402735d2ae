package cache

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/redact"
)

// TestMain keeps the tests' signing key out of the user's config folder.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agenteval-cache-keys-")
	if err != nil {
		panic(err)
	}
	startKeyDir, startKeyDirErr = dir, nil
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// counter is a model that answers with how many calls it has had.
type counter struct{ n atomic.Int64 }

func (c *counter) Generate(ctx context.Context, req *agenteval.ModelRequest) (*agenteval.ModelResponse, error) {
	n := c.n.Add(1)
	return &agenteval.ModelResponse{Message: agenteval.Message{Role: agenteval.RoleAssistant, Content: string(rune('a' + n - 1))},
		Usage: agenteval.Usage{Calls: 1, InputTokens: 10}, Model: "m", FinishReason: "stop"}, nil
}

func req(text string) *agenteval.ModelRequest {
	return &agenteval.ModelRequest{Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: text}}}
}

func TestWrap(t *testing.T) {
	store := &Store{Dir: t.TempDir()}
	base := &counter{}
	m := Wrap(base, "openai:x http://a", store)
	ctx := context.Background()
	first, _ := m.Generate(ctx, req("hi"))
	again, _ := m.Generate(ctx, req("hi"))
	if first.Message.Content != "a" || again.Message.Content != "a" || base.n.Load() != 1 {
		t.Fatalf("first %+v, again %+v, %d calls", first, again, base.n.Load())
	}
	if again.Usage != (agenteval.Usage{CachedCalls: 1}) || again.Model != "m" || again.FinishReason != "stop" {
		t.Errorf("cached reply = %+v", again)
	}
	temp := 0.5
	different := []struct {
		name string
		m    agenteval.Model
		ctx  context.Context
		req  *agenteval.ModelRequest
	}{
		{"other text", m, ctx, req("hello")},
		{"other endpoint", Wrap(base, "openai:x http://b", store), ctx, req("hi")},
		{"variant", m, WithVariant(ctx, "sample 1"), req("hi")},
		{"temperature", m, ctx, &agenteval.ModelRequest{Messages: req("hi").Messages, Temperature: &temp}},
		{"schema", m, ctx, &agenteval.ModelRequest{Messages: req("hi").Messages, Schema: &agenteval.OutputSchema{Name: "v", JSON: []byte(`{}`)}}},
		{"tools", m, ctx, &agenteval.ModelRequest{Messages: req("hi").Messages, Tools: []agenteval.ToolSpec{{Name: "t"}}}},
	}
	for i, d := range different {
		r, _ := d.m.Generate(d.ctx, d.req)
		if r.Usage.CachedCalls != 0 || base.n.Load() != int64(i+2) {
			t.Errorf("%s: answered from the cache", d.name)
		}
	}
	if Wrap(base, "x", nil) != agenteval.Model(base) {
		t.Error("a nil store still wraps")
	}
}

func TestCheck(t *testing.T) {
	store := &Store{Dir: t.TempDir()}
	base := &counter{}
	m := Wrap(base, "id", store)
	onlyB := WithCheck(context.Background(), func(r *agenteval.ModelResponse) bool { return r.Message.Content == "b" })
	m.Generate(onlyB, req("hi")) // "a": rejected, not stored
	r, _ := m.Generate(onlyB, req("hi"))
	if r.Message.Content != "b" || r.Usage.CachedCalls != 0 {
		t.Fatalf("second = %+v", r)
	}
	r, _ = m.Generate(onlyB, req("hi"))
	if r.Message.Content != "b" || r.Usage.CachedCalls != 1 || base.n.Load() != 2 {
		t.Errorf("third = %+v after %d calls", r, base.n.Load())
	}
	// A stored reply that the check now rejects is asked again.
	onlyC := WithCheck(context.Background(), func(r *agenteval.ModelResponse) bool { return r.Message.Content == "c" })
	if r, _ := m.Generate(onlyC, req("hi")); r.Message.Content != "c" {
		t.Errorf("rejected hit: %+v", r)
	}
}

func TestCorruptEntryIsAMiss(t *testing.T) {
	store := &Store{Dir: t.TempDir()}
	base := &counter{}
	m := Wrap(base, "id", store)
	m.Generate(context.Background(), req("hi"))
	files, _ := filepath.Glob(filepath.Join(store.Dir, "*", "*.json"))
	if len(files) != 1 {
		t.Fatalf("files = %v", files)
	}
	os.WriteFile(files[0], []byte("{not json"), 0o644)
	if r, _ := m.Generate(context.Background(), req("hi")); r.Usage.CachedCalls != 0 || base.n.Load() != 2 {
		t.Errorf("a corrupt entry was served: %+v", r)
	}
}

func TestConcurrentWriters(t *testing.T) {
	store := &Store{Dir: t.TempDir()}
	m := Wrap(&counter{}, "id", store)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := m.Generate(context.Background(), req("same")); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	r, _ := m.Generate(context.Background(), req("same"))
	if r.Usage.CachedCalls != 1 {
		t.Errorf("after concurrent writes: %+v", r)
	}
}

// TestWithNonce: requests that differ only by their per-call block id
// share an entry; other differences still miss, and the request sent is
// left as it was.
func TestWithNonce(t *testing.T) {
	base := &counter{}
	m := Wrap(base, "openai:x", &Store{Dir: t.TempDir()})
	ask := func(nonce, text string) *agenteval.ModelResponse {
		t.Helper()
		r := req(`<reply id="` + nonce + `">` + text + `</reply id="` + nonce + `">`)
		resp, err := m.Generate(WithNonce(context.Background(), nonce), r)
		if err != nil {
			t.Fatal(err)
		}
		if r.Messages[0].Content != `<reply id="`+nonce+`">`+text+`</reply id="`+nonce+`">` {
			t.Errorf("the request was changed: %q", r.Messages[0].Content)
		}
		return resp
	}
	ask("aaaaaaaaaaaa", "hi")
	if r := ask("bbbbbbbbbbbb", "hi"); r.Usage.CachedCalls != 1 || base.n.Load() != 1 {
		t.Errorf("another nonce, the same material: %+v after %d calls", r, base.n.Load())
	}
	if r := ask("cccccccccccc", "hello"); r.Usage.CachedCalls != 0 || base.n.Load() != 2 {
		t.Errorf("other material was answered from the cache: %+v", r)
	}
}

// entryFile returns the one entry a store holds.
func entryFile(t *testing.T, dir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if len(files) != 1 {
		t.Fatalf("entries: %v", files)
	}
	return files[0]
}

// TestTamperedEntryIsIgnored: an entry edited after it was written (a
// verdict flipped) fails its MAC, is not served, and is counted.
func TestTamperedEntryIsIgnored(t *testing.T) {
	store := &Store{Dir: t.TempDir()}
	verdict := &fixed{content: `{"c1": {"reason": "no", "passed": false}}`}
	m := Wrap(verdict, "id", store)
	m.Generate(context.Background(), req("judge this"))
	f := entryFile(t, store.Dir)
	b, _ := os.ReadFile(f)
	os.WriteFile(f, bytes.Replace(b, []byte(`\"passed\": false`), []byte(`\"passed\": true`), 1), 0o600)
	r, _ := m.Generate(context.Background(), req("judge this"))
	if r.Usage.CachedCalls != 0 || strings.Contains(r.Message.Content, "true") || verdict.calls.Load() != 2 {
		t.Errorf("the edited entry was served: %+v", r)
	}
	if c := store.Counts(); c.Rejected != 1 || c.Hits != 0 {
		t.Errorf("counts = %+v", c)
	}
	// The live reply replaced it, and is served from then on.
	if r, _ := m.Generate(context.Background(), req("judge this")); r.Usage.CachedCalls != 1 {
		t.Errorf("after the live reply: %+v", r)
	}
	if st, _ := store.Stats(); st.Entries != 1 || st.Bad != 0 {
		t.Errorf("stats = %+v", st)
	}
}

// TestForeignEntryIsIgnored: entries copied from another user's store
// (signed with another key) are not trusted.
func TestForeignEntryIsIgnored(t *testing.T) {
	a, b := &Store{Dir: t.TempDir(), KeyDir: t.TempDir()}, &Store{Dir: t.TempDir()}
	Wrap(&counter{}, "id", a).Generate(context.Background(), req("hi"))
	src := entryFile(t, a.Dir)
	dst := filepath.Join(b.Dir, filepath.Base(filepath.Dir(src)), filepath.Base(src))
	os.MkdirAll(filepath.Dir(dst), 0o700)
	data, _ := os.ReadFile(src)
	os.WriteFile(dst, data, 0o600)
	base := &counter{}
	if r, _ := Wrap(base, "id", b).Generate(context.Background(), req("hi")); r.Usage.CachedCalls != 0 || base.n.Load() != 1 {
		t.Errorf("a copied entry was served: %+v", r)
	}
	if st, _ := b.Stats(); st.Bad != 0 || st.Entries != 1 {
		t.Errorf("stats after the live reply replaced it = %+v", st)
	}
}

// TestEntriesAreRedactedAndPrivate: a secret in a reply never reaches the
// disk, and the store is readable by its owner only.
func TestEntriesAreRedactedAndPrivate(t *testing.T) {
	t.Setenv("PLANTED_API_KEY", "sk-planted-0123456789")
	redact.Reload()
	store := &Store{Dir: filepath.Join(t.TempDir(), "cache")}
	m := Wrap(&fixed{content: "the key is sk-planted-0123456789", args: map[string]any{"token": "sk-planted-0123456789"}}, "id", store)
	r, _ := m.Generate(context.Background(), req("hi"))
	if !strings.Contains(r.Message.Content, "sk-planted") {
		t.Fatalf("the live reply itself is the caller's to redact: %q", r.Message.Content)
	}
	f := entryFile(t, store.Dir)
	data, _ := os.ReadFile(f)
	if strings.Contains(string(data), "sk-planted") || !strings.Contains(string(data), redact.Mask) {
		t.Errorf("entry = %s", data)
	}
	for _, p := range []string{store.Dir, filepath.Dir(f)} {
		if st, _ := os.Stat(p); st.Mode().Perm() != 0o700 {
			t.Errorf("%s mode %v, want 0700", p, st.Mode().Perm())
		}
	}
	for _, p := range []string{f} {
		if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", p, st.Mode().Perm())
		}
	}
	if r, _ := m.Generate(context.Background(), req("hi")); r.Usage.CachedCalls != 1 || strings.Contains(r.Message.Content, "sk-planted") {
		t.Errorf("cached reply = %+v", r)
	}
}

func TestClear(t *testing.T) {
	store := &Store{Dir: t.TempDir()}
	m := Wrap(&counter{}, "id", store)
	m.Generate(context.Background(), req("a"))
	m.Generate(context.Background(), req("b"))
	if n, _ := store.Clear(time.Now().Add(-time.Hour)); n != 0 {
		t.Errorf("cleared %d recent entries", n)
	}
	if n, err := store.Clear(time.Time{}); n != 2 || err != nil {
		t.Errorf("cleared %d, %v", n, err)
	}
	if st, _ := (&Store{Dir: filepath.Join(t.TempDir(), "none")}).Stats(); st.Entries != 0 {
		t.Errorf("a missing store: %+v", st)
	}
}

// fixed is a model that always answers the same.
type fixed struct {
	content string
	args    map[string]any
	calls   atomic.Int64
}

func (f *fixed) Generate(ctx context.Context, req *agenteval.ModelRequest) (*agenteval.ModelResponse, error) {
	f.calls.Add(1)
	msg := agenteval.Message{Role: agenteval.RoleAssistant, Content: f.content}
	if f.args != nil {
		msg.ToolCalls = []agenteval.ToolCall{{ID: "1", Name: "t", Args: f.args}}
	}
	return &agenteval.ModelResponse{Message: msg, Usage: agenteval.Usage{Calls: 1}}, nil
}

// TestClearTouchesOnlyEntries: a cache folder pointed at the wrong place
// loses nothing but cache entries, and stats never writes a key.
func TestClearTouchesOnlyEntries(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "package.json"), []byte("{}"), 0o644)
	os.MkdirAll(filepath.Join(dir, "experiments"), 0o755)
	os.WriteFile(filepath.Join(dir, "experiments", "baseline.json"), []byte("{}"), 0o644)
	os.MkdirAll(filepath.Join(dir, "ab"), 0o755)
	os.WriteFile(filepath.Join(dir, "ab", "notes.json"), []byte("{}"), 0o644)
	store := &Store{Dir: dir, KeyDir: filepath.Join(t.TempDir(), "keys")}
	if st, err := store.Stats(); err != nil || st.Entries != 0 || !st.NoKey {
		t.Errorf("stats = %+v, %v", st, err)
	}
	if _, err := os.Stat(store.KeyDir); err == nil {
		t.Error("stats made a key")
	}
	Wrap(&counter{}, "id", store).Generate(context.Background(), req("hi"))
	if n, err := store.Clear(time.Time{}); n != 1 || err != nil {
		t.Errorf("cleared %d, %v", n, err)
	}
	for _, p := range []string{"package.json", "experiments/baseline.json", "ab/notes.json"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestNumbersSurviveTheCache: tool-call arguments decoded as json.Number
// (1.50, big integers) replay, rather than failing their MAC.
func TestNumbersSurviveTheCache(t *testing.T) {
	store := &Store{Dir: t.TempDir()}
	base := &fixed{args: map[string]any{"amount": json.Number("1.50"), "id": json.Number("9007199254740993")}}
	m := Wrap(base, "id", store)
	m.Generate(context.Background(), req("pay"))
	r, _ := m.Generate(context.Background(), req("pay"))
	if r.Usage.CachedCalls != 1 || base.calls.Load() != 1 || store.Counts().Rejected != 0 {
		t.Fatalf("replay: %+v, %d calls, %+v", r.Usage, base.calls.Load(), store.Counts())
	}
	if got := r.Message.ToolCalls[0].Args["amount"]; got != json.Number("1.50") {
		t.Errorf("amount = %#v", got)
	}
}

// TestDamagedKey is reported, not silently turned into misses; clearing
// a cache never removes the user's key, which signs their other caches.
func TestDamagedKey(t *testing.T) {
	dir, keys := t.TempDir(), t.TempDir()
	key := filepath.Join(keys, keyFile)
	os.WriteFile(key, []byte("short"), 0o600)
	if _, err := (&Store{Dir: dir, KeyDir: keys}).Stats(); err == nil || !strings.Contains(err.Error(), "is damaged") {
		t.Errorf("stats: %v", err)
	}
	if err := (&Store{Dir: dir, KeyDir: keys}).put(strings.Repeat("a", 64), entry{}); err == nil || !strings.Contains(err.Error(), "delete it and the next run makes a new one") {
		t.Errorf("put: %v", err)
	}
	store := &Store{Dir: dir, KeyDir: keys}
	if _, err := store.Clear(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(key); err != nil {
		t.Errorf("clear removed the user's key: %v", err)
	}
	os.Remove(key)
	if _, err := store.secret(); err != nil {
		t.Errorf("after the key was deleted: %v", err)
	}
}
