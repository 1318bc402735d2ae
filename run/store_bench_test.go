package run

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/agent"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/provider"
	"github.com/agenteval/agenteval/report"
	"github.com/agenteval/agenteval/store"
	"github.com/agenteval/agenteval/store/sqlite"
)

// BenchmarkConversationsStore is BenchmarkConversations with results
// written as the CLI writes them, JSONL (discarded) and, with store=on,
// the SQLite run store too: recording a run must cost the runner nothing
// measurable. Compare wall-s and cpu-ms/turn between store=off and
// store=on.
func BenchmarkConversationsStore(b *testing.B) {
	for _, latency := range []time.Duration{50 * time.Millisecond, 0} {
		for _, on := range []bool{false, true} {
			name := fmt.Sprintf("latency=%s/store=off", latency)
			if on {
				name = fmt.Sprintf("latency=%s/store=on", latency)
			}
			b.Run(name, func(b *testing.B) { benchStore(b, latency, on) })
		}
	}
}

func benchStore(b *testing.B, latency time.Duration, on bool) {
	srv, err := fakellm.Start(fakellm.Options{Latency: latency})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	m, err := provider.Open(provider.Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: srv.URL, APIKey: "k", Concurrency: 64})
	if err != nil {
		b.Fatal(err)
	}
	s := loadSuiteN(b, 200)
	agent := &agent.ToolLoop{Model: m}
	j := &judge.Judge{Model: m, Name: "openai:gpt-4o-mini"}
	var db *sqlite.DB
	if on {
		if db, err = sqlite.Open(filepath.Join(b.TempDir(), "agenteval.db"), sqlite.Options{}); err != nil {
			b.Fatal(err)
		}
		defer db.Close()
	}
	for b.Loop() {
		w := report.Multi{report.NewJSONL(io.Discard)}
		if on {
			w = append(w, &store.Recorder{Store: db})
		}
		if err := w.Start(&report.Header{RunID: report.NewRunID(), Started: time.Now()}); err != nil {
			b.Fatal(err)
		}
		cpu0 := cpuTime()
		begin := time.Now()
		n := 0
		err := RunSuite(context.Background(), s, Options{Agent: agent, Judge: j, Concurrency: 20}, func(r *agenteval.Result) error {
			n++
			return w.Write(r)
		})
		if err != nil {
			b.Fatal(err)
		}
		// Close waits until the store has every result: its cost counts.
		if err := w.Close(&report.Summary{}); err != nil {
			b.Fatal(err)
		}
		wall := time.Since(begin)
		b.ReportMetric(wall.Seconds(), "wall-s")
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/800, "cpu-ms/turn")
		if n != 200 {
			b.Fatalf("%d results", n)
		}
	}
}
