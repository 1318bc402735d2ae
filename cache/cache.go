// Package cache keeps model replies on disk and replays them: Wrap makes
// any agenteval.Model a caching one, the way provider makes one that
// retries. Judges and simulated users are cached this way, so a rerun
// against a deterministic agent makes no judge calls; agent calls are never
// cached.
//
// It imports the root package, internal/redact and the standard library.
package cache

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
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
	"sync/atomic"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/redact"
)

// DefaultDir is where the CLI keeps the cache, under the project root (the
// folder of agenteval.yaml, else the git root, else the working
// directory), unless AGENTEVAL_CACHE_DIR names another folder. Runs from
// any folder of a project share it.
const DefaultDir = ".agenteval/cache"

// Dir is the cache folder in effect for the project at root:
// AGENTEVAL_CACHE_DIR, else DefaultDir under root, relative to the working
// directory where it can be, so messages stay short.
func Dir(root string) string {
	if d := os.Getenv("AGENTEVAL_CACHE_DIR"); d != "" {
		return d
	}
	dir := filepath.Join(root, DefaultDir)
	if wd, err := os.Getwd(); err == nil && filepath.IsAbs(dir) {
		if rel, err := filepath.Rel(wd, dir); err == nil {
			return rel
		}
	}
	return dir
}

// version changes when the meaning of cached entries changes.
const version = "model-v3"

// Store is a directory of cached replies, one file per request, named by
// the hash of everything that determines the reply. The folder is private
// to its owner (0700, files 0600), entries are redacted before they are
// written, and each carries an HMAC under the store's own key (keyFile,
// made on first use), so an entry that was edited, or copied from another
// project, is ignored and counted instead of trusted.
type Store struct {
	Dir string

	dirs     sync.Map // subdirectories known to exist
	keyOnce  sync.Once
	key      []byte
	keyErr   error
	hits     atomic.Int64
	stored   atomic.Int64
	rejected atomic.Int64
}

// keyFile holds the store's HMAC key.
const keyFile = "hmac.key"

type entry struct {
	Message      agenteval.Message `json:"message"`
	Usage        agenteval.Usage   `json:"usage"`
	Model        string            `json:"model,omitempty"`
	FinishReason string            `json:"finish_reason,omitempty"`
	// MAC is the HMAC-SHA256, under the store's key, of the request key and
	// the entry's other fields.
	MAC string `json:"mac"`
}

func (s *Store) path(key string) string {
	return filepath.Join(s.Dir, key[:2], key+".json")
}

// secret returns the store's HMAC key, making it on first use.
func (s *Store) secret() ([]byte, error) {
	s.keyOnce.Do(func() {
		p := filepath.Join(s.Dir, keyFile)
		if b, err := os.ReadFile(p); err == nil && len(b) >= 32 {
			s.key = b
			return
		}
		if err := os.MkdirAll(s.Dir, 0o700); err != nil {
			s.keyErr = fmt.Errorf("cache: %w", err)
			return
		}
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			s.keyErr = fmt.Errorf("cache key: %w", err)
			return
		}
		// O_EXCL: when two runs race, the second reads the first's key.
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			if b, rerr := os.ReadFile(p); rerr == nil && len(b) >= 32 {
				s.key = b
				return
			}
			s.keyErr = fmt.Errorf("cache key: %w", err)
			return
		}
		defer f.Close()
		if _, err := f.Write(k); err != nil {
			s.keyErr = fmt.Errorf("cache key: %w", err)
			return
		}
		s.key = k
	})
	return s.key, s.keyErr
}

// mac signs an entry (its MAC field aside) under the request key.
func (s *Store) mac(key string, e entry) (string, error) {
	secret, err := s.secret()
	if err != nil {
		return "", err
	}
	e.MAC = ""
	b, err := json.Marshal(e)
	if err != nil {
		return "", err
	}
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// get returns a cached reply, if any. A missing entry is a miss; one that
// does not parse, or whose MAC does not check, is a miss that is counted.
func (s *Store) get(key string) (entry, bool) {
	b, err := os.ReadFile(s.path(key))
	if err != nil {
		return entry{}, false
	}
	var e entry
	if json.Unmarshal(b, &e) != nil {
		s.rejected.Add(1)
		return entry{}, false
	}
	want, err := s.mac(key, e)
	if err != nil || !hmac.Equal([]byte(want), []byte(e.MAC)) {
		s.rejected.Add(1)
		return entry{}, false
	}
	s.hits.Add(1)
	return e, true
}

// put stores a reply, redacted and signed. It writes to a temporary file
// and renames it, so concurrent runs never see half an entry.
func (s *Store) put(key string, e entry) error {
	p := s.path(key)
	dir := filepath.Dir(p)
	if _, ok := s.dirs.Load(dir); !ok {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("cache: %w", err)
		}
		s.dirs.Store(dir, true)
	}
	e.Message = redactMessage(e.Message)
	mac, err := s.mac(key, e)
	if err != nil {
		return err
	}
	e.MAC = mac
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
	s.stored.Add(1)
	return nil
}

// redactMessage hides known secrets in a reply before it is kept on disk.
func redactMessage(m agenteval.Message) agenteval.Message {
	m.Content = redact.String(m.Content)
	if len(m.ToolCalls) > 0 {
		calls := make([]agenteval.ToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			c.RawArgs = redact.String(c.RawArgs)
			c.Args = redactValue(c.Args).(map[string]any)
			calls[i] = c
		}
		m.ToolCalls = calls
	}
	return m
}

func redactValue(v any) any {
	switch x := v.(type) {
	case string:
		return redact.String(x)
	case map[string]any:
		if x == nil {
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = redactValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactValue(e)
		}
		return out
	}
	return v
}

// Counts is what a store did in this process.
type Counts struct {
	// Hits are replies answered from the store; Stored, replies written;
	// Rejected, entries ignored because they did not parse or their MAC
	// did not check (edited, or from another store).
	Hits, Stored, Rejected int64
}

// Counts returns what the store did so far.
func (s *Store) Counts() Counts {
	return Counts{Hits: s.hits.Load(), Stored: s.stored.Load(), Rejected: s.rejected.Load()}
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
