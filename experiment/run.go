package experiment

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenteval/agenteval"
	"golang.org/x/term"
)

// MetricResult is a metric's value for one row, with the reason. A nil
// Value means the metric could not give one (see Numeric and Discrete).
type MetricResult struct {
	Value  any    `json:"value"`
	Reason string `json:"reason,omitempty"`
}

// Numeric is a metric with values in [Min, Max].
type Numeric struct {
	Name     string
	Min, Max float64
}

// Result checks v against the range: outside it, the result has no value,
// and the reason says why.
func (m Numeric) Result(v float64, reason string) MetricResult {
	if !(v >= m.Min && v <= m.Max) {
		return MetricResult{Reason: fmt.Sprintf("%s: %v is outside the allowed range [%v, %v]; %s", m.Name, v, m.Min, m.Max, reason)}
	}
	return MetricResult{Value: v, Reason: reason}
}

// Discrete is a metric whose value is one of a set.
type Discrete struct {
	Name    string
	Allowed []string
}

// Result checks v against the allowed values: outside them, the result has
// no value, and the reason says why.
func (m Discrete) Result(v, reason string) MetricResult {
	for _, a := range m.Allowed {
		if a == v {
			return MetricResult{Value: v, Reason: reason}
		}
	}
	return MetricResult{Reason: fmt.Sprintf("%s: %q is not one of %v; %s", m.Name, v, m.Allowed, reason)}
}

// Outcome is what the experiment's function returns for a row.
type Outcome struct {
	// Values are the row's outputs (a prediction, a log file path...).
	Values  map[string]any
	Metrics map[string]MetricResult
	Usage   agenteval.Usage
}

// Record is one row's result.
type Record struct {
	Index      int
	Row        Row
	Outcome    Outcome
	Err        error
	DurationMS float64
}

// Options configure Run. The zero value works.
type Options struct {
	// Name names the experiment and its saved file; default the dataset's.
	Name string
	// Concurrency is how many rows run at once; 0 means 4 per CPU.
	Concurrency int
	// Progress receives a live progress line; nil means stderr when it is
	// a terminal, and nothing otherwise.
	Progress io.Writer
	// Dir is where Save writes; default ".agenteval/experiments", beside the
	// other things agenteval keeps and out of the way of version control.
	Dir string
}

// Experiment is a finished run.
type Experiment struct {
	Name    string
	Dataset *Dataset
	Records []Record
	dir     string
}

// Run calls fn on every row, at most Concurrency at once, and returns the
// records in dataset order. A row whose fn fails, or panics, is kept with
// its error; the others go on. Cancelling ctx stops starting rows; rows not
// started are recorded with the context's error.
func Run(ctx context.Context, ds *Dataset, fn func(ctx context.Context, row Row) (Outcome, error), opt Options) (*Experiment, error) {
	if ds == nil {
		return nil, fmt.Errorf("experiment: no dataset")
	}
	name := opt.Name
	if name == "" {
		name = ds.Name
	}
	if name == "" {
		name = "experiment"
	}
	conc := opt.Concurrency
	if conc <= 0 {
		conc = 4 * runtime.GOMAXPROCS(0)
	}
	dir := opt.Dir
	if dir == "" {
		dir = filepath.Join(".agenteval", "experiments")
	}
	e := &Experiment{Name: name, Dataset: ds, Records: make([]Record, len(ds.Rows)), dir: dir}
	progress := opt.Progress
	if progress == nil && term.IsTerminal(int(os.Stderr.Fd())) {
		progress = os.Stderr
	}
	var done, failed atomic.Int64
	stop := make(chan struct{})
	var pwg sync.WaitGroup
	if progress != nil {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			t := time.NewTicker(200 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					fmt.Fprintf(progress, "\r\x1b[K")
					return
				case <-t.C:
					fmt.Fprintf(progress, "\r\x1b[K%s: %d/%d rows · %d errors", name, done.Load(), len(ds.Rows), failed.Load())
				}
			}
		}()
	}
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i, row := range ds.Rows {
		e.Records[i] = Record{Index: i, Row: row}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			e.Records[i].Err = ctx.Err()
			continue
		}
		wg.Add(1)
		go func(rec *Record) {
			defer wg.Done()
			defer func() { <-sem }()
			start := time.Now()
			func() {
				defer func() {
					if p := recover(); p != nil {
						rec.Err = fmt.Errorf("row %d panicked: %v", rec.Index, p)
					}
				}()
				rec.Outcome, rec.Err = fn(ctx, rec.Row)
			}()
			rec.DurationMS = float64(time.Since(start).Microseconds()) / 1000
			done.Add(1)
			if rec.Err != nil {
				failed.Add(1)
			}
		}(&e.Records[i])
	}
	wg.Wait()
	close(stop)
	pwg.Wait()
	return e, nil
}
