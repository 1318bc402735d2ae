package run

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/agent"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/internal/loadsuite"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/provider"
	"github.com/agenteval/agenteval/suite"
)

// loadSuiteN is the load workload: n conversations of 4 turns, each
// turn graded by one judge rubric.
func loadSuiteN(b testing.TB, n int) *suite.Suite {
	s, err := suite.Parse("load.yaml", loadsuite.Conversations(n), suite.Options{JudgeAvailable: true})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkConversations is the load run of issue 4: 200 conversations × 4
// turns against a model target and a judge served by fakellm over HTTP, at
// 50 ms of latency (our target: ≤ 1.05 × the ideal 2.0 s at -j 20) and
// at 0 ms (harness overhead: CPU per turn). The fake serves in this
// process, so its CPU is included.
func BenchmarkConversations(b *testing.B) {
	for _, latency := range []time.Duration{50 * time.Millisecond, 0} {
		b.Run(fmt.Sprintf("latency=%s", latency), func(b *testing.B) {
			srv, err := fakellm.Start(fakellm.Options{Latency: latency, NoLog: true})
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
			for b.Loop() {
				before := srv.Calls()
				cpu0 := cpuTime()
				begin := time.Now()
				n := 0
				err := RunSuite(context.Background(), s, Options{Agent: agent, Judge: j, Concurrency: 20}, func(r *agenteval.Result) error {
					if r.Verdict != agenteval.VerdictPass {
						return fmt.Errorf("%s: %s %s", r.TestID, r.Verdict, r.Error)
					}
					n++
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				wall := time.Since(begin)
				cpu := cpuTime() - cpu0
				calls := srv.Calls() - before
				b.ReportMetric(wall.Seconds(), "wall-s")
				if latency > 0 {
					b.ReportMetric(wall.Seconds()/2.0, "x-ideal")
				}
				b.ReportMetric(float64(cpu.Microseconds())/1000/800, "cpu-ms/turn")
				b.ReportMetric(float64(calls-800)/800, "judge-calls/turn")
				if n != 200 {
					b.Fatalf("%d results", n)
				}
			}
		})
	}
}
