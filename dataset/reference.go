package dataset

import (
	"fmt"
	"io"

	"github.com/agenteval/agenteval"
)

// References are the reference fields of samples whose conversations come
// from elsewhere (traces, session logs), keyed by sample id.
type References map[string]*agenteval.Sample

// ReadReferences reads a JSONL file (or JSON array) of rows that carry an
// id and reference fields (reference, reference_tool_calls,
// reference_topics, rubrics, metadata); a conversation is allowed but not
// needed. Row problems are returned with their positions; the error is for
// files that cannot be read.
func ReadReferences(path string) (References, []*agenteval.PosError, error) {
	r, err := Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	refs := References{}
	var problems []*agenteval.PosError
	for {
		raw, err := r.NextRaw()
		if err == io.EOF {
			return refs, problems, nil
		}
		if err != nil {
			return refs, problems, err
		}
		var d decoder
		d.referenceOnly = true
		s := d.row(raw.Data)
		row := raw.positioned(d.problems)
		problems = append(problems, row.Errors...)
		if s == nil || len(row.Errors) > 0 {
			continue
		}
		if s.ID == "" {
			problems = append(problems, &agenteval.PosError{File: raw.File, Line: raw.Line, Col: raw.Col, Msg: "a reference row needs an id: the id of the conversation it belongs to"})
			continue
		}
		if _, dup := refs[s.ID]; dup {
			problems = append(problems, &agenteval.PosError{File: raw.File, Line: raw.Line, Col: raw.Col, Msg: fmt.Sprintf("a second reference row for id %q; keep one", s.ID)})
			continue
		}
		refs[s.ID] = s
	}
}

// Apply copies the reference fields for s.ID onto s, leaving fields the
// reference does not set alone. It reports whether there was one.
func (refs References) Apply(s *agenteval.Sample) bool {
	if s == nil {
		return false
	}
	ref, ok := refs[s.ID]
	if !ok {
		return false
	}
	if ref.Reference != "" {
		s.Reference = ref.Reference
	}
	if ref.ReferenceToolCalls != nil {
		s.ReferenceToolCalls = ref.ReferenceToolCalls
	}
	if ref.ReferenceTopics != nil {
		s.ReferenceTopics = ref.ReferenceTopics
	}
	if ref.Rubrics != nil {
		s.Rubrics = ref.Rubrics
	}
	for k, v := range ref.Metadata {
		if s.Metadata == nil {
			s.Metadata = map[string]any{}
		}
		s.Metadata[k] = v
	}
	return true
}
