package suite

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/agenteval/agenteval"
	"go.yaml.in/yaml/v4"
)

// A streamed suite (Options.Stream) keeps its tests in its file. Load
// reads and checks every test as it always does, a chunk of the file at a
// time (chunks.go), and keeps of each test only what planning a run needs
// (TestInfo, about 40 bytes for a test with no dependencies); a run reads
// the tests again, a chunk at a time, as it starts them. The decoded tests
// of a large suite are several times the file's size (about 2.2 KB for a
// conversation of 4 turns), and were most of a large run's memory.
//
// Each chunk's SHA-256 is taken when the file is loaded and checked when
// the chunk is read again: a file changed after it was loaded is an error,
// never a run of some old tests and some new ones. Files the tests name
// (file:// inputs, graders' prompt files) are read again with the tests.

// TestInfo is what a suite knows of a test without holding it: what
// planning a run needs (selection, shards, dependencies, targets, the
// notes a run says at its start).
type TestInfo struct {
	ID                  string
	Mode                agenteval.Mode
	DependsOn           []string
	OnDependencyFailure string
	// Skip is why the test cannot run here, or "" (Test.Skip).
	Skip    string
	Targets []string
	// UserModel is the model that plays the test's simulated user, when
	// the test names one (user.model).
	UserModel string
	// OpensWithSystem says that the conversation the test sends its agent
	// opens with a system message.
	OpensWithSystem bool
}

// InfoOf is what TestInfo keeps of a test.
func InfoOf(t *agenteval.Test) TestInfo {
	ti := TestInfo{ID: t.ID, Mode: t.Mode, DependsOn: t.DependsOn, OnDependencyFailure: t.OnDependencyFailure, Skip: t.Skip, Targets: t.Targets}
	if t.User != nil {
		ti.UserModel = t.User.Model
	}
	first := t.Input
	if len(first) == 0 && len(t.Turns) > 0 {
		first = t.Turns[0].Input
	}
	ti.OpensWithSystem = len(first) > 0 && first[0].Role == agenteval.RoleSystem
	return ti
}

// TestSuiteName is the suite's name as its tests carry it (Test.Suite):
// the first test's, else Name.
func (s *Suite) TestSuiteName() string {
	switch {
	case s.stream != nil:
		return s.stream.name
	case len(s.Tests) > 0:
		return s.Tests[0].Suite
	}
	return s.Name
}

// Streamed says that the suite's tests were left in its file
// (Options.Stream): Tests is empty, and NumTests, Info, EachTest and a
// TestReader give them.
func (s *Suite) Streamed() bool { return s.stream != nil }

// NumTests is how many tests the suite has.
func (s *Suite) NumTests() int {
	if s.stream != nil {
		return len(s.stream.flags)
	}
	return len(s.Tests)
}

// Info is what the suite knows of test i (0 <= i < NumTests) without
// reading it.
func (s *Suite) Info(i int) TestInfo {
	if s.stream == nil {
		return InfoOf(&s.Tests[i])
	}
	return s.stream.info(i)
}

// EachTest calls f with each test in file order, and stops at the first
// error f returns. A streamed suite's tests are read from its file a chunk
// at a time, each a copy that f may keep; the error is also that of a file
// that can no longer be read, or has changed since it was loaded.
func (s *Suite) EachTest(f func(i int, t *agenteval.Test) error) error {
	if s.stream == nil {
		for i := range s.Tests {
			if err := f(i, &s.Tests[i]); err != nil {
				return err
			}
		}
		return nil
	}
	for k := range s.stream.chunks {
		tests, err := s.stream.read(k)
		if err != nil {
			return err
		}
		first := s.stream.chunks[k].firstTest
		for j := range tests {
			if err := f(first+j, &tests[j]); err != nil {
				return err
			}
		}
	}
	return nil
}

// LoadTests reads a streamed suite's tests into Tests, which it then
// holds like any other suite; it does nothing to a suite in memory.
func (s *Suite) LoadTests() error {
	if s.stream == nil {
		return nil
	}
	tests := make([]agenteval.Test, 0, s.NumTests())
	err := s.EachTest(func(_ int, t *agenteval.Test) error {
		tests = append(tests, *t)
		return nil
	})
	if err != nil {
		return err
	}
	s.Tests, s.stream = tests, nil
	return nil
}

// AmendTests changes every test with f: those in Tests now, and a
// streamed suite's each time they are read. f must leave alone what
// TestInfo holds, which the suite keeps as it was loaded.
func (s *Suite) AmendTests(f func(t *agenteval.Test)) {
	if s.stream == nil {
		for i := range s.Tests {
			f(&s.Tests[i])
		}
		return
	}
	s.stream.amend = append(s.stream.amend, f)
}

// TestReader reads a suite's tests by index, as a run starts them: a
// streamed suite's a chunk at a time, keeping the few chunks it read last.
// It is not safe for use by several goroutines at once.
type TestReader struct {
	s     *Suite
	cache []readChunk
}

type readChunk struct {
	k     int
	tests []agenteval.Test
}

// readerChunks is how many chunks a TestReader keeps: the one a run is
// starting tests from, and a few others that tests waiting on their
// depends_on come from.
const readerChunks = 4

// NewTestReader returns a reader of the suite's tests.
func (s *Suite) NewTestReader() *TestReader { return &TestReader{s: s} }

// Test returns test i (0 <= i < NumTests): for a suite in memory, the
// test in Tests; for a streamed one, a copy read from its file.
func (r *TestReader) Test(i int) (*agenteval.Test, error) {
	st := r.s.stream
	if st == nil {
		return &r.s.Tests[i], nil
	}
	k := st.chunkOf(i)
	for n, c := range r.cache {
		if c.k == k {
			if n > 0 {
				copy(r.cache[1:n+1], r.cache[:n])
				r.cache[0] = c
			}
			t := c.tests[i-st.chunks[k].firstTest]
			return &t, nil
		}
	}
	tests, err := st.read(k)
	if err != nil {
		return nil, err
	}
	if len(r.cache) < readerChunks {
		r.cache = append(r.cache, readChunk{})
	}
	copy(r.cache[1:], r.cache[:len(r.cache)-1])
	r.cache[0] = readChunk{k: k, tests: tests}
	t := tests[i-st.chunks[k].firstTest]
	return &t, nil
}

// stream is a streamed suite's tests: where they are in the file, what is
// known of each, and what reads them again.
type stream struct {
	file   string
	chunks []chunk
	// d and sc read the tests again as they were read when loading; each
	// read gets its own copies, with problems of its own (said already).
	d    decoder
	sc   *suiteCtx
	name string

	// ids are the tests' ids one after another, ends where each ends:
	// no pointers for the collector to follow, and no string headers.
	// While loading, the text grows in idBuf, and becomes ids once the
	// tests are read (seal).
	ids   string
	idBuf []byte
	ends  []uint32
	flags []uint8
	// extra are the tests with more to know than an id and flags, by
	// index, in order.
	extra []extraInfo
	// skips holds each Skip text once: a suite-wide reason is every
	// test's.
	skips map[string]string

	amend []func(*agenteval.Test)
}

const (
	flagConversation = 1 << iota
	flagSystem
	flagExtra
)

type extraInfo struct {
	i    int
	info TestInfo
}

// add records a test read while loading.
func (st *stream) add(t *agenteval.Test) {
	ti := InfoOf(t)
	i := len(st.flags)
	st.idBuf = append(st.idBuf, ti.ID...)
	st.ends = append(st.ends, uint32(len(st.idBuf)))
	var f uint8
	if ti.Mode == agenteval.ModeConversation {
		f |= flagConversation
	}
	if ti.OpensWithSystem {
		f |= flagSystem
	}
	if len(ti.DependsOn) > 0 || ti.OnDependencyFailure != "" || ti.Skip != "" || len(ti.Targets) > 0 || ti.UserModel != "" {
		f |= flagExtra
		if ti.Skip != "" {
			if st.skips == nil {
				st.skips = map[string]string{}
			}
			if s, ok := st.skips[ti.Skip]; ok {
				ti.Skip = s
			} else {
				st.skips[ti.Skip] = ti.Skip
			}
		}
		ti.ID = strings.Clone(ti.ID)
		st.extra = append(st.extra, extraInfo{i: i, info: ti})
	}
	st.flags = append(st.flags, f)
}

// seal ends loading: the ids become one string, and what grew while
// loading is cut to size.
func (st *stream) seal() {
	st.ids, st.idBuf = string(st.idBuf), nil
	st.ends = append([]uint32(nil), st.ends...)
	st.flags = append([]uint8(nil), st.flags...)
	st.skips = nil
}

// id is test i's id.
func (st *stream) id(i int) string {
	start := uint32(0)
	if i > 0 {
		start = st.ends[i-1]
	}
	return st.ids[start:st.ends[i]]
}

func (st *stream) info(i int) TestInfo {
	f := st.flags[i]
	if f&flagExtra != 0 {
		k := sort.Search(len(st.extra), func(k int) bool { return st.extra[k].i >= i })
		return st.extra[k].info
	}
	ti := TestInfo{ID: st.id(i), OpensWithSystem: f&flagSystem != 0}
	if f&flagConversation != 0 {
		ti.Mode = agenteval.ModeConversation
	}
	return ti
}

// chunkOf is the chunk that holds test i.
func (st *stream) chunkOf(i int) int {
	return sort.Search(len(st.chunks), func(k int) bool { return st.chunks[k].firstTest+st.chunks[k].tests > i })
}

// text reads a chunk's text from the file and checks it is what was
// loaded.
func (st *stream) text(c *chunk) ([]byte, error) {
	f, err := os.Open(st.file)
	if err != nil {
		return nil, fmt.Errorf("read the tests of %s again: %w", st.file, err)
	}
	defer f.Close()
	return chunkText(f, st.file, c)
}

// chunkText reads a chunk's text and checks its SHA-256.
func chunkText(r io.ReaderAt, file string, c *chunk) ([]byte, error) {
	b := make([]byte, c.size)
	if _, err := r.ReadAt(b, c.off); err != nil && err != io.EOF {
		return nil, fmt.Errorf("read the tests of %s again: %w", file, err)
	}
	if sha256.Sum256(b) != c.sum {
		return nil, changed(file, c)
	}
	return b, nil
}

func changed(file string, c *chunk) error {
	return &agenteval.PosError{File: file, Line: c.line, Msg: "the eval file has changed since it was loaded (the tests from this line differ); run it again as it is now"}
}

// read reads chunk k's tests again.
func (st *stream) read(k int) ([]agenteval.Test, error) {
	c := &st.chunks[k]
	text, err := st.text(c)
	if err != nil {
		return nil, err
	}
	d := st.d
	d.problems = &problems{}
	sc := *st.sc
	sc.d = &d
	if len(sc.prompts) > 0 {
		// A prompt reports through its own file's decoder.
		ps := make([]prompt, len(sc.prompts))
		for i, p := range sc.prompts {
			pd := *p.d
			pd.problems = d.problems
			p.d = &pd
			ps[i] = p
		}
		sc.prompts = ps
	}
	root, ok := d.parse(text, "YAML")
	if !ok || root == nil || root.Kind != yaml.SequenceNode || len(root.Content) != c.count {
		return nil, changed(st.file, c)
	}
	shiftLines(root, c.line-1)
	tests := make([]agenteval.Test, 0, c.tests)
	for j, item := range root.Content {
		d.itemTests(item, c.firstItem+j, &sc, st.name, func(t *agenteval.Test) {
			for _, f := range st.amend {
				f(t)
			}
			tests = append(tests, *t)
		})
	}
	if len(tests) != c.tests {
		return nil, changed(st.file, c)
	}
	for j := range tests {
		if tests[j].ID != st.id(c.firstTest+j) {
			return nil, changed(st.file, c)
		}
	}
	return tests, nil
}

// loadStreamed is Load of a streamed suite; ok is false for a file that
// is not read that way (its tests are not one block sequence the split
// is sure of), which Load then reads whole.
func loadStreamed(path string, opt Options) (s *Suite, ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, nil
	}
	defer f.Close()
	sp, ok, err := scanTests(f, true)
	if err != nil || !ok {
		return nil, false, nil
	}
	d, err := newDecoder(path, opt)
	if err != nil {
		return nil, true, err
	}
	d.lenient = true
	st := &stream{file: path, chunks: sp.chunks}
	d.split = &splitTestsInfo{line: sp.line, chunks: sp.chunks, read: func(c *chunk) ([]byte, error) { return chunkText(f, path, c) }}
	d.stream = st
	d.check = newValidator(d, opt)
	root, ok := d.parse(sp.head, "YAML")
	if !ok || root == nil {
		return nil, false, nil
	}
	s = d.suiteFrom(root, nil, false)
	if d.splitFailed {
		return nil, false, nil
	}
	if s.stream == nil {
		// Read in memory after all (scenarios: beside tests:).
		d.check = nil
	} else {
		st.d = *d
		st.d.problems, st.d.split, st.d.stream, st.d.check = nil, nil, nil, nil
		for i := range st.chunks {
			st.chunks[i].nodes = nil
		}
	}
	s, err = d.finish(s, opt)
	return s, true, err
}

// HasSplitTests reports that YAML text has tests: at its top level, as
// one block sequence at the margin, the common shape: the rest of the
// text and each chunk of tests are parsed on their own, so a large file
// is never one node tree. false says only that it cannot tell that way;
// parsing the text whole can.
func HasSplitTests(r io.ReaderAt, size int64) bool {
	sp, ok, err := scanTests(io.NewSectionReader(r, 0, size), false)
	if err != nil || !ok {
		return false
	}
	d := &decoder{problems: &problems{}, env: func(string) (string, bool) { return "", false }}
	root, ok := d.parse(sp.head, "YAML")
	if !ok || root == nil || !d.splitHolds(root, mappingValue(root, "tests"), sp.line) {
		return false
	}
	// As the file whole would decode: keys that are text, each once.
	var top map[string]yaml.Node
	if yaml.Unmarshal(sp.head, &top) != nil {
		return false
	}
	for i := range sp.chunks {
		c := &sp.chunks[i]
		text := make([]byte, c.size)
		if _, err := r.ReadAt(text, c.off); err != nil && err != io.EOF {
			return false
		}
		n, ok := d.parse(text, "YAML")
		if !ok || len(d.errs) > 0 || n == nil || n.Kind != yaml.SequenceNode || len(n.Content) != c.count || n.Line != 1 {
			return false
		}
	}
	return true
}
