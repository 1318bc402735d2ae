package report

import (
	"fmt"
	"io"
	"strings"
)

// Options configure the writers New makes; each writer reads its own part.
type Options struct {
	Table TableOptions
	HTML  HTMLOptions
}

// writerFormats are the formats New knows, with what makes each. They are
// in the order an error lists them: the results file first, then the
// formats for people.
var writerFormats = []struct {
	name string
	new  func(w io.Writer, opt Options) Writer
}{
	{"jsonl", func(w io.Writer, _ Options) Writer { return NewJSONL(w) }},
	{"json", func(w io.Writer, _ Options) Writer { return NewJSON(w) }},
	{"table", func(w io.Writer, opt Options) Writer { return NewTable(w, opt.Table) }},
	{"junit", func(w io.Writer, _ Options) Writer { return NewJUnit(w) }},
	{"markdown", func(w io.Writer, _ Options) Writer { return NewMarkdown(w) }},
	{"html", func(w io.Writer, opt Options) Writer { return NewHTML(w, opt.HTML) }},
}

// New makes the Writer for a format by its name, as --format gives it:
// jsonl (the results file), json, table, junit, markdown or html. Every
// writer is also a Starter that wants the run's header, and html's is an
// *HTMLWriter, for two runs side by side. An
// unknown name is an error that lists the known ones, so that a command
// can pass it on as it is.
func New(format string, w io.Writer, opt Options) (Writer, error) {
	names := make([]string, len(writerFormats))
	for i, f := range writerFormats {
		if f.name == format {
			return f.new(w, opt), nil
		}
		names[i] = f.name
	}
	return nil, fmt.Errorf("unknown format %q; use %s", format, strings.Join(names, ", "))
}
