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
	"github.com/agenteval/agenteval/internal/pgtest"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/provider"
	"github.com/agenteval/agenteval/report"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/store"
	"github.com/agenteval/agenteval/store/postgres"
	"github.com/agenteval/agenteval/store/sqlite"
)

// BenchmarkConversationsStore is BenchmarkConversations with results
// written as the CLI writes them: JSONL (discarded), and the SQLite run
// store too or not. Each iteration runs the 200 conversations twice, store
// off and on, in alternating order, so both see the same load on a shared
// machine: compare
// off-wall-s with on-wall-s, and off-cpu-ms/turn with on-cpu-ms/turn.
// Recording a run must cost the runner nothing measurable.
func BenchmarkConversationsStore(b *testing.B) {
	for _, latency := range []time.Duration{50 * time.Millisecond, 0} {
		b.Run(fmt.Sprintf("latency=%s", latency), func(b *testing.B) {
			db, err := sqlite.Open(filepath.Join(b.TempDir(), "agenteval.db"), sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			benchStore(b, latency, db)
		})
	}
}

// BenchmarkConversationsPostgres is BenchmarkConversationsStore with the
// store in a PostgreSQL server on loopback, as a team's shared store.
func BenchmarkConversationsPostgres(b *testing.B) {
	srv := pgtest.New(b)
	for _, latency := range []time.Duration{50 * time.Millisecond, 0} {
		b.Run(fmt.Sprintf("latency=%s", latency), func(b *testing.B) {
			db, err := postgres.Open(srv.NewDatabase(b), postgres.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			benchStore(b, latency, db)
		})
	}
}

func benchStore(b *testing.B, latency time.Duration, db store.Store) {
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
	var wall, cpu [2]time.Duration
	runs := 0
	for b.Loop() {
		// Alternate which goes first, so neither pays for the other.
		order := []bool{false, true}
		if runs%2 == 1 {
			order = []bool{true, false}
		}
		for _, on := range order {
			i := 0
			if on {
				i = 1
			}
			w := report.Multi{report.NewJSONL(io.Discard)}
			if on {
				w = append(w, &store.Recorder{Store: db})
			}
			if err := w.Start(&results.Header{RunID: results.NewRunID(), Started: time.Now()}); err != nil {
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
			if err := w.Close(&results.Summary{}); err != nil {
				b.Fatal(err)
			}
			wall[i] += time.Since(begin)
			cpu[i] += cpuTime() - cpu0
			if n != 200 {
				b.Fatalf("%d results", n)
			}
		}
		runs++
	}
	for i, name := range []string{"off", "on"} {
		b.ReportMetric(wall[i].Seconds()/float64(runs), name+"-wall-s")
		b.ReportMetric(float64(cpu[i].Microseconds())/1000/800/float64(runs), name+"-cpu-ms/turn")
	}
}
