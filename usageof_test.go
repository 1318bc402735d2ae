package agenteval

import (
	"errors"
	"fmt"
	"testing"
)

// spentErr is an error that says what it spent, as provider.Error does.
type spentErr struct{ u Usage }

func (e *spentErr) Error() string      { return "failed" }
func (e *spentErr) SpentUsage() *Usage { return &e.u }

func TestUsageOf(t *testing.T) {
	spent := &spentErr{Usage{Calls: 1, Retries: 2, WaitedMS: 30}}
	for _, tc := range []struct {
		name string
		err  error
		want *Usage
	}{
		{"nil", nil, nil},
		{"says nothing", errors.New("plain"), nil},
		{"itself", spent, &spent.u},
		{"wrapped", fmt.Errorf("judge: %w", spent), &spent.u},
		{"fatal", fmt.Errorf("judge: %w", &FatalError{Err: spent}), &spent.u},
		{"joined", errors.Join(errors.New("other"), spent), &spent.u},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := UsageOf(tc.err)
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("UsageOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}
