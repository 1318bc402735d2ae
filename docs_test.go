package agenteval_test

// The documentation is checked like code: every relative link of README.md
// and docs/ resolves (the file exists, the #anchor names a heading of it as
// GitHub makes heading anchors), every page of docs/ can be reached from
// README.md, and every Go snippet of docs/ is code that go vet compiles.
// Nothing here touches the network: links with a scheme (https:, mailto:)
// are not followed.

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// mdNotYetLinked are docs pages no page links to yet, with why; the
// orphan check skips them. Delete an entry once its page is linked (the
// test says so in its log).
var mdNotYetLinked = map[string]string{}

// mdNotYetWritten are files that links may name before they exist, with
// why: a link to one is logged, not failed. Delete an entry once its file
// is committed (the test says so in its log).
var mdNotYetWritten = map[string]string{}

// mdRoots are the pages checked besides every page under docs/; the
// orphan check starts from the first.
var mdRoots = []string{"README.md"}

// TestDocsLinks: every relative link and image of README.md and docs/
// names a file or folder of the repository, and an #anchor into a
// markdown page names one of its headings.
func TestDocsLinks(t *testing.T) {
	pages := mdPages(t)
	site := newMDSite()
	for _, p := range pages {
		doc, err := site.page(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range doc.links {
			msg := site.check(p, l.dest)
			if msg == "" {
				continue
			}
			if target, _, _, err := site.resolve(p, l.dest); err == nil && mdNotYetWritten[target] != "" {
				t.Logf("%s:%d: link %s: %s (not yet written: %s)", p, l.line, l.dest, msg, mdNotYetWritten[target])
				continue
			}
			t.Errorf("%s:%d: link %s: %s", p, l.line, l.dest, msg)
		}
	}
	for target := range mdNotYetWritten {
		if _, err := os.Stat(site.file(target)); err == nil {
			t.Logf("%s exists now: delete it from mdNotYetWritten in docs_test.go", target)
		}
	}
}

// TestDocsReachable: every page under docs/ is reached from README.md by
// following links, so no page is written that no reader finds.
func TestDocsReachable(t *testing.T) {
	pages := mdPages(t)
	site := newMDSite()
	seen := map[string]bool{mdRoots[0]: true}
	queue := []string{mdRoots[0]}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		doc, err := site.page(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range doc.links {
			target, ok := site.mdTarget(p, l.dest)
			if ok && !seen[target] {
				seen[target] = true
				queue = append(queue, target)
			}
		}
	}
	for _, p := range pages {
		if !strings.HasPrefix(p, "docs/") {
			continue
		}
		why, pending := mdNotYetLinked[p]
		switch {
		case !seen[p] && !pending:
			t.Errorf("%s is linked from no page that README.md leads to: link it from README.md or from a docs page that is", p)
		case seen[p] && pending:
			t.Logf("%s is linked now (%s): delete it from mdNotYetLinked in docs_test.go", p, why)
		}
	}
	for p := range mdNotYetLinked {
		if !slices.Contains(pages, p) {
			t.Logf("mdNotYetLinked names %s, which does not exist: delete it", p)
		}
	}
}

// TestDocsGoSnippets: every Go snippet of docs/ is taken from Go code that
// go vet ./... compiles (an Example in an example_test.go, which go test
// also runs, or a test or package file), so the docs' code works. The
// README's snippets have their own, stricter test (readme_test.go).
func TestDocsGoSnippets(t *testing.T) {
	var snippets []mdBlock
	for _, p := range mdPages(t) {
		if !strings.HasPrefix(p, "docs/") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, blk := range parseMD(string(b)).blocks {
			if blk.lang == "go" || blk.lang == "golang" {
				blk.file = p
				snippets = append(snippets, blk)
			}
		}
	}
	if len(snippets) == 0 {
		return
	}
	sources, err := mdGoSources(".")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d Go snippets in docs/", len(snippets))
	for _, s := range snippets {
		want := mdNormLines(s.text)
		if len(want) == 0 {
			continue
		}
		found := false
		for _, src := range sources {
			if mdContainsRun(src, want) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s:%d: this Go snippet is in no Go file that go vet compiles: write it as a runnable Example (an example_test.go) or in a test, and copy it from there\n%s",
				s.file, s.line, strings.Join(want, "\n"))
		}
	}
}

// mdPages lists the pages checked: mdRoots, then every .md file under
// docs/, as slash paths from the repository root.
func mdPages(t *testing.T) []string {
	t.Helper()
	pages := slices.Clone(mdRoots)
	err := filepath.WalkDir("docs", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "docs" && mdSkipDir(d.Name()) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(strings.ToLower(p), ".md") {
			pages = append(pages, filepath.ToSlash(p))
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return pages
}

func mdSkipDir(name string) bool {
	return name == "node_modules" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// mdSite reads pages once and knows their anchors.
type mdSite struct {
	root  string // the repository's folder
	pages map[string]*mdDoc
}

func newMDSite() *mdSite { return &mdSite{root: ".", pages: map[string]*mdDoc{}} }

// file is the path of p, a slash path from the repository root.
func (s *mdSite) file(p string) string { return filepath.Join(s.root, filepath.FromSlash(p)) }

func (s *mdSite) page(p string) (*mdDoc, error) {
	if d, ok := s.pages[p]; ok {
		return d, nil
	}
	b, err := os.ReadFile(s.file(p))
	if err != nil {
		return nil, err
	}
	d := parseMD(string(b))
	s.pages[p] = d
	return d, nil
}

var mdScheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

// resolve splits a link into the repository path it names (a slash path
// from the root) and its anchor. external is true for a link with a
// scheme, which is not checked.
func (s *mdSite) resolve(from, dest string) (target, anchor string, external bool, err error) {
	if mdScheme.MatchString(dest) || strings.HasPrefix(dest, "//") {
		return "", "", true, nil
	}
	p, anchor, _ := strings.Cut(dest, "#")
	p, _, _ = strings.Cut(p, "?")
	if p == "" {
		return from, anchor, false, nil
	}
	if strings.HasPrefix(p, "/") {
		return "", "", false, fmt.Errorf("starts with /, which GitHub resolves against github.com, not the repository: write a path relative to %s", from)
	}
	if u, uerr := url.PathUnescape(p); uerr == nil {
		p = u
	}
	target = path.Join(path.Dir(from), p)
	if target == ".." || strings.HasPrefix(target, "../") {
		return "", "", false, fmt.Errorf("leaves the repository")
	}
	return target, anchor, false, nil
}

// check says what is wrong with a link of page from, or "".
func (s *mdSite) check(from, dest string) string {
	target, anchor, external, err := s.resolve(from, dest)
	if external {
		return ""
	}
	if err != nil {
		return err.Error()
	}
	st, err := os.Stat(s.file(target))
	if err != nil {
		return fmt.Sprintf("%s does not exist", target)
	}
	if anchor == "" {
		return ""
	}
	if st.IsDir() {
		// GitHub shows the folder's README below its listing.
		target = path.Join(target, "README.md")
		if _, err := os.Stat(s.file(target)); err != nil {
			return ""
		}
	}
	if !strings.EqualFold(path.Ext(target), ".md") {
		return "" // #L12 into code, and the like
	}
	doc, err := s.page(target)
	if err != nil {
		return err.Error()
	}
	if a, err := url.PathUnescape(anchor); err == nil {
		anchor = a
	}
	if doc.anchors[anchor] {
		return ""
	}
	msg := fmt.Sprintf("%s has no heading with the anchor #%s", target, anchor)
	if near := mdClosest(anchor, doc.anchorList); near != "" {
		msg += fmt.Sprintf("; did you mean #%s?", near)
	}
	return msg
}

// mdTarget is the docs page a link leads to: a markdown file, or the
// README.md of a folder.
func (s *mdSite) mdTarget(from, dest string) (string, bool) {
	target, _, external, err := s.resolve(from, dest)
	if external || err != nil {
		return "", false
	}
	st, err := os.Stat(s.file(target))
	if err != nil {
		return "", false
	}
	if st.IsDir() {
		target = path.Join(target, "README.md")
		if _, err := os.Stat(s.file(target)); err != nil {
			return "", false
		}
	}
	return target, strings.EqualFold(path.Ext(target), ".md")
}

// mdDoc is what the checks need of a markdown page.
type mdDoc struct {
	links      []mdLink
	anchors    map[string]bool
	anchorList []string
	blocks     []mdBlock
}

type mdLink struct {
	dest string
	line int
}

// mdBlock is a fenced code block.
type mdBlock struct {
	file, lang, text string
	line             int
}

var (
	mdFence    = regexp.MustCompile("^\\s*(`{3,}|~{3,})\\s*([^\\s`]*)")
	mdATX      = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	mdSetext   = regexp.MustCompile(`^ {0,3}(=+|-+)[ \t]*$`)
	mdInline   = regexp.MustCompile(`\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)`)
	mdRefDef   = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)`)
	mdHTMLLink = regexp.MustCompile(`(?i)<(?:a|img|source)\b[^>]*?\s(?:href|src)\s*=\s*["']([^"']*)["']`)
	mdHTMLID   = regexp.MustCompile(`(?i)<[a-z][^>]*?\s(?:id|name)\s*=\s*["']([^"']+)["']`)
)

// parseMD reads a page's links, heading anchors and fenced code blocks.
// Links in code (fenced blocks and `spans`) are not links.
func parseMD(text string) *mdDoc {
	d := &mdDoc{anchors: map[string]bool{}}
	counts := map[string]int{}
	addHeading := func(h string) {
		slug := mdSlug(h)
		a := slug
		if n := counts[slug]; n > 0 {
			a = fmt.Sprintf("%s-%d", slug, n)
		}
		counts[slug]++
		d.anchors[a] = true
		d.anchorList = append(d.anchorList, a)
	}
	lines := strings.Split(text, "\n")
	var fence string // the opening fence while in a block
	var blk *mdBlock
	var body []string
	prev := "" // the previous line, when it may start a setext heading
	for i, raw := range lines {
		line := strings.TrimRight(raw, "\r")
		if fence != "" {
			if m := mdFence.FindStringSubmatch(line); m != nil && m[2] == "" && m[1][0] == fence[0] && len(m[1]) >= len(fence) {
				blk.text = strings.Join(body, "\n")
				d.blocks = append(d.blocks, *blk)
				fence, blk, body = "", nil, nil
			} else {
				body = append(body, line)
			}
			continue
		}
		if m := mdFence.FindStringSubmatch(line); m != nil {
			fence = m[1]
			blk = &mdBlock{lang: strings.ToLower(m[2]), line: i + 1}
			prev = ""
			continue
		}
		if m := mdATX.FindStringSubmatch(line); m != nil {
			addHeading(m[2])
			prev = ""
			continue
		}
		if mdSetext.MatchString(line) && prev != "" {
			addHeading(prev)
			prev = ""
			continue
		}
		plain := mdStripCode(line)
		for _, re := range []*regexp.Regexp{mdInline, mdRefDef, mdHTMLLink} {
			for _, m := range re.FindAllStringSubmatch(plain, -1) {
				dest := strings.TrimSuffix(strings.TrimPrefix(m[1], "<"), ">")
				d.links = append(d.links, mdLink{dest: dest, line: i + 1})
			}
		}
		for _, m := range mdHTMLID.FindAllStringSubmatch(plain, -1) {
			d.anchors[m[1]] = true
		}
		prev = ""
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "|") && !strings.HasPrefix(t, ">") &&
			!strings.HasPrefix(t, "- ") && !strings.HasPrefix(t, "* ") && line[0] != ' ' && line[0] != '\t' {
			prev = t
		}
	}
	return d
}

// mdStripCode removes the code spans of a line: a run of backticks up to
// the next run of the same length. A run with no match is text.
func mdStripCode(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			b.WriteByte(line[i])
			i++
			continue
		}
		n := 0
		for i+n < len(line) && line[i+n] == '`' {
			n++
		}
		end := -1
		for j := i + n; j < len(line); {
			if line[j] != '`' {
				j++
				continue
			}
			m := 0
			for j+m < len(line) && line[j+m] == '`' {
				m++
			}
			if m == n {
				end = j + m
				break
			}
			j += m
		}
		if end < 0 {
			b.WriteString(line[i : i+n])
			i += n
			continue
		}
		i = end
	}
	return b.String()
}

var (
	mdLinkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	mdTag      = regexp.MustCompile(`<[^>]+>`)
)

// mdSlug is the anchor GitHub gives a heading: the heading's text, lower
// case, without punctuation other than - and _, each space a hyphen.
func mdSlug(h string) string {
	h = mdLinkText.ReplaceAllString(h, "$1")
	h = mdTag.ReplaceAllString(h, "")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdClosest is the anchor of list nearest to a, if one is close.
func mdClosest(a string, list []string) string {
	best, bestD := "", len(a)/3+2
	for _, c := range list {
		if d := mdDistance(a, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func mdDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// mdGoSources reads every Go file go vet ./... compiles: the module's,
// outside testdata and other modules, as trimmed non-blank lines.
func mdGoSources(root string) ([][]string, error) {
	var out [][]string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == root {
				return nil
			}
			if mdSkipDir(d.Name()) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, mdNormLines(string(b)))
		return nil
	})
	return out, err
}

// mdNormLines trims each line and drops the blank ones, so that a snippet
// matches its source whatever the indentation.
func mdNormLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func mdContainsRun(hay, needle []string) bool {
	for i := 0; i+len(needle) <= len(hay); i++ {
		if slices.Equal(hay[i:i+len(needle)], needle) {
			return true
		}
	}
	return false
}

// TestMDSlug: anchors are made as GitHub makes them.
func TestMDSlug(t *testing.T) {
	tests := []struct{ heading, want string }{
		{"The eval file format", "the-eval-file-format"},
		{"Receiving traces live: `run --otlp-listen`", "receiving-traces-live-run---otlp-listen"},
		{"A2A agents (`a2a:`)", "a2a-agents-a2a"},
		{"4. In go test", "4-in-go-test"},
		{"[Links](x.md) and <em>tags</em>", "links-and-tags"},
		{"tool_calls", "tool_calls"},
		{"C++ & Go", "c--go"},
		{"Ünïcode", "ünïcode"},
	}
	for _, tt := range tests {
		if got := mdSlug(tt.heading); got != tt.want {
			t.Errorf("mdSlug(%q) = %q, want %q", tt.heading, got, tt.want)
		}
	}
}

// TestParseMD: what the checks read of a page, and what they leave alone.
func TestParseMD(t *testing.T) {
	doc := parseMD("# Title\n\n## Usage\n\nText [a](a.md#usage) and `[not](code.md)`.\n" +
		"```sh\n[not](fenced.md)\n# not a heading\n```\n\n## Usage\n\nSetext\n---\n\n" +
		"[ref]: ref.md\n<img src=\"pic.png\"> <a id=\"here\"></a>\n![alt](img/x.png \"title\")\n")
	var links []string
	for _, l := range doc.links {
		links = append(links, l.dest)
	}
	if want := []string{"a.md#usage", "ref.md", "pic.png", "img/x.png"}; !slices.Equal(links, want) {
		t.Errorf("links = %q, want %q", links, want)
	}
	if want := []string{"title", "usage", "usage-1", "setext"}; !slices.Equal(doc.anchorList, want) {
		t.Errorf("anchors = %q, want %q", doc.anchorList, want)
	}
	if !doc.anchors["here"] {
		t.Errorf("the HTML anchor #here is missing: %v", doc.anchors)
	}
	if len(doc.blocks) != 1 || doc.blocks[0].lang != "sh" || doc.blocks[0].line != 6 {
		t.Errorf("blocks = %+v", doc.blocks)
	}
}

// TestMDCheck: what a link checker reports, on a small site.
func TestMDCheck(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"README.md":              "# Top\n\n## Install it\n",
		"docs/guide.md":          "# Guide\n\n## Step one\n",
		"docs/how-to/README.md":  "# How-to guides\n",
		"examples/agent/main.go": "package main\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	site := &mdSite{root: dir, pages: map[string]*mdDoc{}}
	tests := []struct{ from, dest, want string }{
		{"README.md", "docs/guide.md", ""},
		{"README.md", "docs/guide.md#step-one", ""},
		{"README.md", "#install-it", ""},
		{"README.md", "https://example.com/x.md#nowhere", ""},
		{"README.md", "mailto:a@b.c", ""},
		{"README.md", "examples/agent", ""},
		{"README.md", "examples/agent/main.go#L1", ""},
		{"docs/guide.md", "how-to/", ""},
		{"docs/guide.md", "how-to#how-to-guides", ""},
		{"docs/guide.md", "../README.md#install-it", ""},
		{"docs/guide.md", "../README.md#instal-it", "README.md has no heading with the anchor #instal-it; did you mean #install-it?"},
		{"docs/guide.md", "#step-two", "docs/guide.md has no heading with the anchor #step-two; did you mean #step-one?"},
		{"docs/guide.md", "missing.md", "docs/missing.md does not exist"},
		{"docs/guide.md", "/docs/guide.md", "starts with /, which GitHub resolves against github.com, not the repository: write a path relative to docs/guide.md"},
		{"docs/guide.md", "../../outside.md", "leaves the repository"},
	}
	for _, tt := range tests {
		if got := site.check(tt.from, tt.dest); got != tt.want {
			t.Errorf("%s: link %s: got %q, want %q", tt.from, tt.dest, got, tt.want)
		}
	}
	if got, ok := site.mdTarget("docs/guide.md", "how-to/"); !ok || got != "docs/how-to/README.md" {
		t.Errorf("mdTarget of a folder = %q, %v; want its README.md", got, ok)
	}
}
