// Package cache keeps model replies on disk and replays them: Wrap makes
// any agenteval.Model a caching one, the way provider makes one that
// retries. Judges and simulated users are cached this way, so a rerun
// against a deterministic agent makes no judge calls; agent calls are never
// cached.
//
// It imports the root package, internal/redact and the standard library.
package cache

import (
	"bytes"
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
	"regexp"
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
const version = "model-v4"

// Store is a directory of cached replies, one file per request, named by
// the hash of everything that determines the reply. The folder is private
// to its owner (0700, files 0600), entries are redacted before they are
// written, and each carries an HMAC of its exact bytes under the user's
// key, which lives outside every project (see KeyDir). Only entries this
// user wrote are trusted: one that was edited, or that came with the
// project (a cache committed to a repository, with or without the key it
// was signed with), is ignored and counted.
type Store struct {
	Dir string
	// KeyDir is the folder of the signing key; empty means KeyDir().
	KeyDir string

	dirs     sync.Map // subdirectories known to exist
	keyMu    sync.Mutex
	key      []byte
	hits     atomic.Int64
	stored   atomic.Int64
	rejected atomic.Int64
}

// KeyDirEnv names a folder to keep the signing key in instead of the
// user's config folder, for tests.
const KeyDirEnv = "AGENTEVAL_CACHE_KEY_DIR"

// keyFile holds the user's HMAC key, in the key folder.
const keyFile = "cache.key"

// projectKeyFile is where the key used to be kept: in the cache folder,
// where a repository can ship one with the entries it signs. One found
// there is never used.
const projectKeyFile = "hmac.key"

// keySize is the HMAC key's length in bytes.
const keySize = 32

// startKeyDir is the key folder as the environment had it when the
// program started, before a project's .env could set variables: a .env
// that comes with a repository must not move the key into it, by naming
// the folder or by moving the config folder it is found in.
var startKeyDir, startKeyDirErr = keyDirFromEnv()

func keyDirFromEnv() (string, error) {
	if d := os.Getenv(KeyDirEnv); d != "" {
		return filepath.Abs(d)
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("cache key: %w; set %s to a private folder", err, KeyDirEnv)
	}
	return filepath.Join(d, "agenteval"), nil
}

// KeyDir is the folder of the user's cache signing key:
// $AGENTEVAL_CACHE_KEY_DIR as the
// program started with it, else agenteval in the user's config folder
// (os.UserConfigDir). One key signs all the user's caches; made on
// first use, it is readable by the user only.
func KeyDir() (string, error) { return startKeyDir, startKeyDirErr }

func (s *Store) keyDir() (string, error) {
	if s.KeyDir != "" {
		return s.KeyDir, nil
	}
	return KeyDir()
}

// KeyPath is the file of the key the store's entries are signed with.
func (s *Store) KeyPath() (string, error) {
	d, err := s.keyDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, keyFile), nil
}

// entry is a cached reply.
type entry struct {
	Message      agenteval.Message `json:"message"`
	Usage        agenteval.Usage   `json:"usage"`
	Model        string            `json:"model,omitempty"`
	FinishReason string            `json:"finish_reason,omitempty"`
}

// envelope is an entry file: the entry's bytes, and their MAC.
type envelope struct {
	MAC   string          `json:"mac"`
	Entry json.RawMessage `json:"entry"`
}

// entryName is the file name of an entry: its request key, in hex.
var entryName = regexp.MustCompile(`^[0-9a-f]{64}\.json$`)

func (s *Store) path(key string) string {
	return filepath.Join(s.Dir, key[:2], key+".json")
}

// ProjectKey says whether the cache folder holds a key of its own, which
// is ignored: either one an earlier agenteval kept there, or one a
// repository shipped to have its entries trusted.
func (s *Store) ProjectKey() bool {
	_, err := os.Lstat(filepath.Join(s.Dir, projectKeyFile))
	return err == nil
}

// readKey reads the user's HMAC key, if there is one, without making it.
func (s *Store) readKey() ([]byte, error) {
	p, err := s.KeyPath()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	if len(b) != keySize {
		return nil, fmt.Errorf("the cache key %s is damaged (%d bytes, not %d); delete it and the next run makes a new one (cached replies are then asked again)", p, len(b), keySize)
	}
	return b, nil
}

// secret returns the user's HMAC key, making it on first use. The key is
// written whole to a temporary file and linked into place, so a run never
// reads half of one, and two runs racing agree on the first.
func (s *Store) secret() ([]byte, error) {
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	if s.key != nil {
		return s.key, nil
	}
	k, err := s.readKey()
	if errors.Is(err, fs.ErrNotExist) {
		k, err = s.makeKey()
	}
	if err != nil {
		return nil, err
	}
	s.key = k
	return k, nil
}

func (s *Store) makeKey() ([]byte, error) {
	dir, err := s.keyDir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cache key: %w", err)
	}
	k := make([]byte, keySize)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("cache key: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".key-*")
	if err != nil {
		return nil, fmt.Errorf("cache key: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(k)
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		return nil, fmt.Errorf("cache key: %v", errors.Join(werr, cerr))
	}
	if err := os.Link(tmp.Name(), filepath.Join(dir, keyFile)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return s.readKey() // another run made it first
		}
		return nil, fmt.Errorf("cache key: %w", err)
	}
	return k, nil
}

// sign is the MAC of an entry's bytes under its request key.
func sign(secret []byte, key string, data []byte) string {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// verify reads an entry file's bytes: an entry whose MAC checks, or why
// it does not.
func verify(secret []byte, key string, data []byte) (entry, error) {
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil || env.Entry == nil {
		return entry{}, errors.New("not an entry")
	}
	if !hmac.Equal([]byte(sign(secret, key, env.Entry)), []byte(env.MAC)) {
		return entry{}, errors.New("its MAC does not check")
	}
	var e entry
	dec := json.NewDecoder(bytes.NewReader(env.Entry))
	dec.UseNumber()
	if err := dec.Decode(&e); err != nil {
		return entry{}, errors.New("not an entry")
	}
	return e, nil
}

// get returns a cached reply, if any. A missing entry is a miss; one that
// does not parse, or whose MAC does not check, is a miss that is counted.
func (s *Store) get(key string) (entry, bool) {
	data, err := os.ReadFile(s.path(key))
	if err != nil {
		return entry{}, false
	}
	secret, err := s.secret()
	if err != nil {
		s.rejected.Add(1)
		return entry{}, false
	}
	e, err := verify(secret, key, data)
	if err != nil {
		s.rejected.Add(1)
		return entry{}, false
	}
	return e, true
}

// put stores a reply, redacted and signed. It writes to a temporary file
// and renames it, so concurrent runs never see half an entry.
func (s *Store) put(key string, e entry) error {
	secret, err := s.secret()
	if err != nil {
		return err
	}
	p := s.path(key)
	dir := filepath.Dir(p)
	if _, ok := s.dirs.Load(dir); !ok {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("cache: %w", err)
		}
		s.dirs.Store(dir, true)
	}
	e.Message = redactMessage(e.Message)
	raw, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	b, err := json.Marshal(envelope{MAC: sign(secret, key, raw), Entry: raw})
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
	// did not check (edited, or not written by this user).
	Hits, Stored, Rejected int64
	// ProjectKey says the cache folder holds a key of its own, unused.
	ProjectKey bool
}

// Counts returns what the store did so far.
func (s *Store) Counts() Counts {
	return Counts{Hits: s.hits.Load(), Stored: s.stored.Load(), Rejected: s.rejected.Load(), ProjectKey: s.ProjectKey()}
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
			c.s.hits.Add(1)
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
