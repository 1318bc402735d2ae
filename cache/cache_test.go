package cache

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agenteval/agenteval"
)

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
