package run

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/cache"
	"github.com/agenteval/agenteval/dataset"
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/provider"
	_ "github.com/agenteval/agenteval/provider/openai"
)

// BenchmarkJudgeThroughput is the load run of issue 3: 200 samples scored
// with one judge metric against fakellm over HTTP at 50 ms of latency and
// 16 samples in flight. The ideal is ceil(200/16) rounds × calls per sample
// × 50 ms. It also counts judge calls per sample for every judge metric, and
// checks that a cached rerun makes none.
func BenchmarkJudgeThroughput(b *testing.B) {
	data, err := exec.Command("go", "run", "../internal/tools/gensamples", "-n", "200").Output()
	if err != nil {
		b.Fatal(err)
	}
	const latency = 50 * time.Millisecond
	const jobs = 16
	s, err := fakellm.Start(fakellm.Options{Latency: latency})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	m, err := provider.Open(provider.Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: s.URL, APIKey: "k", Concurrency: 64})
	if err != nil {
		b.Fatal(err)
	}
	metrics := []string{"rubrics", "agent_goal_accuracy", "topic_adherence", "instruction_retention", "inference_memory", "self_coherence", "versioned_editing", "conversation_relevance"}
	for _, name := range metrics {
		b.Run(name, func(b *testing.B) {
			cacheDir := b.TempDir()
			j := &judge.Judge{Model: m, Name: "openai:gpt-4o-mini"}
			var params map[string]any
			if name == "rubrics" {
				params = map[string]any{"criteria": []any{"The assistant confirms the booking."}}
			}
			g, err := grade.New(grade.Spec{Type: name, Judge: j, Options: params})
			if err != nil {
				b.Fatal(err)
			}
			score := func() (int, time.Duration) {
				before := s.Calls()
				begin := time.Now()
				n := 0
				err := ScoreDataset(context.Background(), dataset.NewReader(bytes.NewReader(data), "load.jsonl"), []Metric{{Name: name, Grader: g}},
					ScoreOptions{Concurrency: jobs}, func(r *agenteval.Result) error {
						if r.Verdict == agenteval.VerdictError {
							return fmt.Errorf("%s: %s", r.TestID, r.Error)
						}
						n++
						return nil
					})
				if err != nil {
					b.Fatal(err)
				}
				if n != 200 {
					b.Fatalf("%d results", n)
				}
				return s.Calls() - before, time.Since(begin)
			}
			for b.Loop() {
				// Counted without the cache: the fake's identical answers would
				// otherwise make later samples' identical calls cache hits.
				j.Model = m
				calls, wall := score()
				j.Model = cache.Wrap(m, j.Name, &cache.Store{Dir: cacheDir})
				os.RemoveAll(cacheDir)
				score()
				perSample := float64(calls) / 200
				ideal := time.Duration((200+jobs-1)/jobs) * time.Duration(perSample) * latency
				cached, _ := score()
				b.ReportMetric(perSample, "calls/sample")
				b.ReportMetric(wall.Seconds(), "wall-s")
				b.ReportMetric(wall.Seconds()/ideal.Seconds(), "x-ideal")
				b.ReportMetric(float64(cached), "cached-rerun-calls")
			}
		})
	}
}
