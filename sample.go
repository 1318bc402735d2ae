package agenteval

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Sample is one recorded conversation to score: Ragas's MultiTurnSample plus
// an ID and free-form metadata.
//
// A nil ReferenceToolCalls means the sample has no reference; a non-nil empty
// slice means the reference is "no tool calls", which tool_call_accuracy
// scores 1.0 when the agent made none. The same holds for ReferenceTopics.
type Sample struct {
	ID                 string            `json:"id,omitempty"`
	UserInput          Conversation      `json:"user_input"`
	Reference          string            `json:"reference,omitempty"`
	ReferenceToolCalls []ToolCall        `json:"reference_tool_calls,omitempty"`
	Rubrics            map[string]string `json:"rubrics,omitempty"`
	ReferenceTopics    []string          `json:"reference_topics,omitempty"`
	Metadata           map[string]any    `json:"metadata,omitempty"`
}

// The Ragas field names, in the order Ragas declares them.
const (
	fieldUserInput          = "user_input"
	fieldReference          = "reference"
	fieldReferenceToolCalls = "reference_tool_calls"
	fieldRubrics            = "rubrics"
	fieldReferenceTopics    = "reference_topics"
)

// Features returns the sample's fields that are set, keyed by their Ragas
// names (plus "id" and "metadata"), like Ragas's to_dict(exclude_none). A
// field that is present but empty, such as reference_tool_calls: [], is kept,
// because it means something different from a missing one.
func (s *Sample) Features() map[string]any {
	f := make(map[string]any, 7)
	if s.ID != "" {
		f["id"] = s.ID
	}
	if s.UserInput != nil {
		f[fieldUserInput] = s.UserInput
	}
	if s.Reference != "" {
		f[fieldReference] = s.Reference
	}
	if s.ReferenceToolCalls != nil {
		f[fieldReferenceToolCalls] = s.ReferenceToolCalls
	}
	if s.Rubrics != nil {
		f[fieldRubrics] = s.Rubrics
	}
	if s.ReferenceTopics != nil {
		f[fieldReferenceTopics] = s.ReferenceTopics
	}
	if len(s.Metadata) > 0 {
		f["metadata"] = s.Metadata
	}
	return f
}

// String renders every set field as "name: value" lines. The conversation is
// rendered with Pretty and indented under user_input.
func (s *Sample) String() string {
	var b strings.Builder
	if s.ID != "" {
		fmt.Fprintf(&b, "id: %s\n", s.ID)
	}
	if s.UserInput != nil {
		b.WriteString("user_input:\n")
		for _, line := range strings.Split(s.UserInput.Pretty(), "\n") {
			b.WriteString("  ")
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	if s.Reference != "" {
		fmt.Fprintf(&b, "reference: %s\n", s.Reference)
	}
	if s.ReferenceToolCalls != nil {
		parts := make([]string, len(s.ReferenceToolCalls))
		for i, c := range s.ReferenceToolCalls {
			parts[i] = c.String()
		}
		fmt.Fprintf(&b, "reference_tool_calls: [%s]\n", strings.Join(parts, ", "))
	}
	if s.Rubrics != nil {
		keys := make([]string, 0, len(s.Rubrics))
		for k := range s.Rubrics {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("rubrics:\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s: %s\n", k, s.Rubrics[k])
		}
	}
	if s.ReferenceTopics != nil {
		fmt.Fprintf(&b, "reference_topics: [%s]\n", strings.Join(s.ReferenceTopics, ", "))
	}
	if len(s.Metadata) > 0 {
		m, _ := json.Marshal(s.Metadata)
		fmt.Fprintf(&b, "metadata: %s\n", m)
	}
	return b.String()
}
