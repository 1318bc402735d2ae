package dataset

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"

	"github.com/agenteval/agenteval"
)

// ragasRow is the Ragas MultiTurnSample JSON shape. Field order follows
// Ragas, and an empty-but-present reference list is kept as [].
type ragasRow struct {
	ID                 string            `json:"id,omitempty"`
	UserInput          []ragasMessage    `json:"user_input"`
	Reference          string            `json:"reference,omitempty"`
	ReferenceToolCalls *[]ragasToolCall  `json:"reference_tool_calls,omitempty"`
	Rubrics            map[string]string `json:"rubrics,omitempty"`
	ReferenceTopics    *[]string         `json:"reference_topics,omitempty"`
	Metadata           map[string]any    `json:"metadata,omitempty"`
}

type ragasMessage struct {
	Content    string          `json:"content"`
	Type       string          `json:"type"`
	ToolCalls  []ragasToolCall `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Metadata   map[string]any  `json:"metadata,omitempty"`
}

type ragasToolCall struct {
	ID   string         `json:"id,omitempty"`
	Name string         `json:"name"`
	Args map[string]any `json:"args"`
	// RawArgs keeps undecodable arguments; Ragas ignores the field.
	RawArgs string `json:"raw_args,omitempty"`
}

var ragasType = map[agenteval.Role]string{
	agenteval.RoleUser:      "human",
	agenteval.RoleAssistant: "ai",
	agenteval.RoleTool:      "tool",
	agenteval.RoleSystem:    "system",
}

func toRagasCalls(cs []agenteval.ToolCall) []ragasToolCall {
	if cs == nil {
		return nil
	}
	out := make([]ragasToolCall, len(cs))
	for i, c := range cs {
		args := c.Args
		if args == nil {
			// Ragas requires an object; undecodable text travels in raw_args.
			args = map[string]any{}
		}
		out[i] = ragasToolCall{ID: c.ID, Name: c.Name, Args: args, RawArgs: c.RawArgs}
	}
	return out
}

// toRagas returns the sample in Ragas's MultiTurnSample JSON form. System
// messages, which Ragas has no type for, are written with type "system".
func toRagas(s *agenteval.Sample) any {
	row := ragasRow{
		ID:        s.ID,
		Reference: s.Reference,
		Rubrics:   s.Rubrics,
		Metadata:  s.Metadata,
		UserInput: make([]ragasMessage, len(s.UserInput)),
	}
	for i, m := range s.UserInput {
		row.UserInput[i] = ragasMessage{
			Content:    m.Content,
			Type:       ragasType[m.Role],
			ToolCalls:  toRagasCalls(m.ToolCalls),
			ToolCallID: m.ToolCallID,
			Metadata:   m.Metadata,
		}
	}
	if s.ReferenceToolCalls != nil {
		rc := toRagasCalls(s.ReferenceToolCalls)
		row.ReferenceToolCalls = &rc
	}
	if s.ReferenceTopics != nil {
		t := s.ReferenceTopics
		row.ReferenceTopics = &t
	}
	return row
}

// Writer writes samples as Ragas JSONL, one row per line.
type Writer struct {
	bw *bufio.Writer
}

// NewWriter writes Ragas JSONL to w. Call Flush when done.
func NewWriter(w io.Writer) *Writer { return &Writer{bw: bufio.NewWriter(w)} }

// Write writes one sample as one line.
func (w *Writer) Write(s *agenteval.Sample) error {
	b, err := json.Marshal(toRagas(s))
	if err != nil {
		return fmt.Errorf("encode sample %q: %w", s.ID, err)
	}
	b = append(b, '\n')
	if _, err := w.bw.Write(b); err != nil {
		return fmt.Errorf("write sample: %w", err)
	}
	return nil
}

// Flush writes any buffered rows.
func (w *Writer) Flush() error { return w.bw.Flush() }

// csvHeader is the fixed header of a CSV export. Unlike Ragas, which takes
// the header from the first row, every row has every column.
var csvHeader = []string{"id", "user_input", "reference", "reference_tool_calls", "reference_topics", "rubrics", "sample_json"}

// CSVWriter exports samples to CSV: one row per sample, with the conversation
// rendered by Pretty, reference fields as JSON, and the whole sample as Ragas
// JSON in the last column so nothing is lost.
type CSVWriter struct {
	cw      *csv.Writer
	started bool
}

// NewCSVWriter writes CSV to w. Call Flush when done.
func NewCSVWriter(w io.Writer) *CSVWriter { return &CSVWriter{cw: csv.NewWriter(w)} }

// Write writes one sample, and the header before the first.
func (w *CSVWriter) Write(s *agenteval.Sample) error {
	if !w.started {
		w.started = true
		if err := w.cw.Write(csvHeader); err != nil {
			return fmt.Errorf("write csv header: %w", err)
		}
	}
	jsonOrEmpty := func(v any, present bool) string {
		if !present {
			return ""
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	whole, err := json.Marshal(toRagas(s))
	if err != nil {
		return fmt.Errorf("encode sample %q: %w", s.ID, err)
	}
	rec := []string{
		s.ID,
		s.UserInput.Pretty(),
		s.Reference,
		jsonOrEmpty(toRagasCalls(s.ReferenceToolCalls), s.ReferenceToolCalls != nil),
		jsonOrEmpty(s.ReferenceTopics, s.ReferenceTopics != nil),
		jsonOrEmpty(s.Rubrics, s.Rubrics != nil),
		string(whole),
	}
	if err := w.cw.Write(rec); err != nil {
		return fmt.Errorf("write csv row: %w", err)
	}
	return nil
}

// Flush writes buffered rows and reports any write error.
func (w *CSVWriter) Flush() error {
	w.cw.Flush()
	return w.cw.Error()
}
