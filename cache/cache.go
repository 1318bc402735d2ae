// Package cache keeps model replies on disk and replays them: Wrap makes
// any agenteval.Model a caching one, the way provider makes one that
// retries. Judges and simulated users are cached this way, so a rerun
// against a deterministic agent makes no judge calls; agent calls are never
// cached.
//
// It imports the root package and the standard library.
package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agenteval/agenteval"
)

// DefaultDir is where the CLI keeps the cache, relative to the working
// directory, unless AGENTEVAL_CACHE_DIR names another folder.
const DefaultDir = ".agenteval/cache"

// Dir is the cache folder in effect: AGENTEVAL_CACHE_DIR, else DefaultDir.
func Dir() string {
	if d := os.Getenv("AGENTEVAL_CACHE_DIR"); d != "" {
		return d
	}
	return DefaultDir
}

// version changes when the meaning of cached entries changes.
const version = "model-v2"

// Store is a directory of cached replies, one file per request, named by
// the hash of everything that determines the reply.
type Store struct {
	Dir string

	dirs sync.Map // subdirectories known to exist
}

type entry struct {
	Message      agenteval.Message `json:"message"`
	Usage        agenteval.Usage   `json:"usage"`
	Model        string            `json:"model,omitempty"`
	FinishReason string            `json:"finish_reason,omitempty"`
}

func (s *Store) path(key string) string {
	return filepath.Join(s.Dir, key[:2], key+".json")
}

// get returns a cached reply, if any. A corrupt entry counts as a miss.
func (s *Store) get(key string) (entry, bool) {
	b, err := os.ReadFile(s.path(key))
	if err != nil {
		return entry{}, false
	}
	var e entry
	if json.Unmarshal(b, &e) != nil {
		return entry{}, false
	}
	return e, true
}

// put stores a reply. It writes to a temporary file and renames it, so
// concurrent runs never see half an entry.
func (s *Store) put(key string, e entry) error {
	p := s.path(key)
	dir := filepath.Dir(p)
	if _, ok := s.dirs.Load(dir); !ok {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("cache: %w", err)
		}
		s.dirs.Store(dir, true)
	}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("cache: %w", err)
	}
	tmp.Close()
	if err := os.Rename(tmp.Name(), p); err != nil && !errors.Is(err, fs.ErrExist) {
		os.Remove(tmp.Name())
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}

type (
	variantKey struct{}
	checkKey   struct{}
	nonceKey   struct{}
)

// nonceMark stands for a request's nonce in its cache key.
const nonceMark = "{nonce}"

// WithNonce tells the cache that the calls made with ctx carry nonce, a
// block id drawn afresh for each call (see judge.Quote): the key hashes
// the messages with it replaced by a fixed mark, so that a rerun on the
// same material is answered from the cache.
func WithNonce(ctx context.Context, nonce string) context.Context {
	return context.WithValue(ctx, nonceKey{}, nonce)
}

// stable is msgs with nonce replaced in every content.
func stable(msgs agenteval.Conversation, nonce string) agenteval.Conversation {
	if nonce == "" {
		return msgs
	}
	out := make(agenteval.Conversation, len(msgs))
	for i, m := range msgs {
		out[i] = m
		out[i].Content = strings.ReplaceAll(m.Content, nonce, nonceMark)
	}
	return out
}

// WithCheck makes the calls made with ctx cache only the replies ok
// accepts, and replay only those: a judge's reply that does not fit its
// schema, or a simulated user's empty message, is asked again on a rerun
// instead of being replayed for ever.
func WithCheck(ctx context.Context, ok func(*agenteval.ModelResponse) bool) context.Context {
	return context.WithValue(ctx, checkKey{}, ok)
}

// WithVariant marks the calls made with ctx as variant v of otherwise
// identical requests whose replies are meant to differ, such as the
// samples of a judge's vote or the trials of a simulated user. Each
// variant is cached apart.
func WithVariant(ctx context.Context, v string) context.Context {
	return context.WithValue(ctx, variantKey{}, v)
}

// Wrap returns a model that answers a request from s when the same
// request, to the model id names, was answered before; the reply then
// carries usage {cached_calls: 1} and costs nothing. Other requests go to
// m, and their replies are stored. id must name everything about the
// model that the request does not: provider, model and endpoint. A nil
// store returns m.
func Wrap(m agenteval.Model, id string, s *Store) agenteval.Model {
	if s == nil {
		return m
	}
	return &cached{m: m, id: id, s: s}
}

type cached struct {
	m  agenteval.Model
	id string
	s  *Store
}

// key hashes everything that determines a reply.
func (c *cached) key(ctx context.Context, req *agenteval.ModelRequest) (string, error) {
	h := sha256.New()
	enc := json.NewEncoder(h)
	variant, _ := ctx.Value(variantKey{}).(string)
	var schema any
	if req.Schema != nil {
		schema = []any{req.Schema.Name, req.Schema.Schema}
		if req.Schema.JSON != nil {
			schema = []any{req.Schema.Name, json.RawMessage(req.Schema.JSON)}
		}
	}
	nonce, _ := ctx.Value(nonceKey{}).(string)
	for _, part := range []any{version, c.id, variant, stable(req.Messages, nonce), req.Tools, req.Temperature, req.MaxTokens, schema} {
		if err := enc.Encode(part); err != nil {
			return "", fmt.Errorf("cache key: %w", err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (c *cached) Generate(ctx context.Context, req *agenteval.ModelRequest) (*agenteval.ModelResponse, error) {
	key, err := c.key(ctx, req)
	if err != nil {
		return c.m.Generate(ctx, req)
	}
	accept, _ := ctx.Value(checkKey{}).(func(*agenteval.ModelResponse) bool)
	if e, ok := c.s.get(key); ok {
		resp := &agenteval.ModelResponse{Message: e.Message, Usage: agenteval.Usage{CachedCalls: 1}, Model: e.Model, FinishReason: e.FinishReason}
		if accept == nil || accept(resp) {
			return resp, nil
		}
	}
	resp, err := c.m.Generate(ctx, req)
	if err != nil || resp == nil || (accept != nil && !accept(resp)) {
		return resp, err
	}
	// A cache that cannot be written costs money later, not correctness
	// now, so its error is not the call's.
	_ = c.s.put(key, entry{Message: resp.Message, Usage: resp.Usage, Model: resp.Model, FinishReason: resp.FinishReason})
	return resp, nil
}
