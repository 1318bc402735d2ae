package main

import (
	"strings"

	"github.com/agenteval/agenteval/dataset"
	"github.com/agenteval/agenteval/trace"
	"github.com/spf13/pflag"
)

// inputFlags choose how score, validate and export read their input: the
// format (detected unless forced) and a file of references to join onto
// conversations that carry none, such as traces.
type inputFlags struct {
	format    string
	reference string
}

func (f *inputFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&f.format, "input-format", "", "read the input as this format instead of detecting it: "+strings.Join(trace.FormatNames(), ", "))
	fl.StringVar(&f.reference, "reference", "", "JSONL of {id, reference, reference_tool_calls, reference_topics, rubrics} rows joined onto the conversations by id")
}

// open opens the input; its errors are usage errors, and problems in the
// reference file are reported before anything is read.
func (f *inputFlags) open(path string) (*trace.Source, error) {
	if f.format != "" {
		if _, ok := trace.LookupFormat(f.format); !ok {
			return nil, usageErr("unknown --input-format %q; use one of %s", f.format, strings.Join(trace.FormatNames(), ", "))
		}
	}
	var refs dataset.References
	// A named pipe would block the open for good, deaf to Ctrl-C; it is
	// refused before anything is read.
	if err := dataset.RegularFile(path); err != nil {
		return nil, usageErr("%v", err)
	}
	if f.reference != "" {
		r, problems, err := dataset.ReadReferences(f.reference)
		if err != nil {
			return nil, usageErr("--reference: %v", err)
		}
		if len(problems) > 0 {
			var b strings.Builder
			for _, p := range problems {
				b.WriteString(p.Error())
				b.WriteByte('\n')
			}
			return nil, usageErr("%s--reference %s has %d problems; fix them and run again", b.String(), f.reference, len(problems))
		}
		refs = r
	}
	src, err := trace.Open(path, trace.Options{Format: f.format, References: refs})
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return src, nil
}
