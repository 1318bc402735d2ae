package grade

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/agenteval/agenteval"
)

// Length checks how long the reply is, in characters.
var Length = deterministic(Definition{Name: "length", Doc: "the reply has at least min and at most max characters"}, newLength)

// LengthOptions is the options of length.
type LengthOptions struct {
	Min *int `json:"min" doc:"the fewest characters allowed"`
	Max *int `json:"max" doc:"the most characters allowed"`
}

func newLength(o LengthOptions, _ Env) (Func, error) {
	if o.Min == nil && o.Max == nil {
		return nil, fmt.Errorf("needs min, max or both: the reply's length in characters")
	}
	if o.Min != nil && o.Max != nil && *o.Min > *o.Max {
		return nil, fmt.Errorf("min %d is more than max %d", *o.Min, *o.Max)
	}
	text := "length"
	if o.Min != nil {
		text += fmt.Sprintf(" at least %d", *o.Min)
	}
	if o.Max != nil {
		text += fmt.Sprintf(" at most %d", *o.Max)
	}
	return func(_ context.Context, in *agenteval.GradeInput) (Outcome, error) {
		n := utf8.RuneCountInString(in.Output.LastAssistant())
		ok := (o.Min == nil || n >= *o.Min) && (o.Max == nil || n <= *o.Max)
		return binary(text, ok, fmt.Sprintf("%d characters", n)), nil
	}, nil
}
