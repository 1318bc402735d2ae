package suite

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/agenteval/agenteval/internal/loadsuite"
)

// BenchmarkParseConversations parses 10,000 conversations (a 4 MB file,
// whose whole node tree takes about 50 MB). peak-live-MB is the most the
// heap held live after a collection during the parse, sampled every
// millisecond: the file is read a chunk of tests at a time (chunks.go),
// so the peak is about the typed suite (typed-MB, which includes the
// file's bytes).
func BenchmarkParseConversations(b *testing.B) {
	data := loadsuite.Conversations(10000)
	for b.Loop() {
		runtime.GC()
		stop, peak := peakLive()
		s, err := Parse("load.yaml", data, Options{JudgeAvailable: true})
		p := peak()
		close(stop)
		if err != nil || len(s.Tests) != 10000 {
			b.Fatalf("%d tests, %v", len(s.Tests), err)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(p)/(1<<20), "peak-live-MB")
		b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "typed-MB")
		runtime.KeepAlive(s)
	}
}

// BenchmarkLoadStreamed is the same file loaded streamed (Options.Stream):
// the peak of the load, and what the suite keeps for the run.
func BenchmarkLoadStreamed(b *testing.B) {
	path := filepath.Join(b.TempDir(), "load.yaml")
	if err := os.WriteFile(path, loadsuite.Conversations(10000), 0o644); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		stop, peak := peakLive()
		s, err := Load(path, Options{JudgeAvailable: true, Stream: true})
		p := peak()
		close(stop)
		if err != nil || !s.Streamed() || s.NumTests() != 10000 {
			b.Fatalf("%d tests, %v", s.NumTests(), err)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(p)/(1<<20), "peak-live-MB")
		b.ReportMetric(float64(ms.HeapAlloc-before.HeapAlloc)/10000, "kept-B/test")
		runtime.KeepAlive(s)
	}
}

// peakLive samples the live heap until stop is closed.
func peakLive() (chan struct{}, func() uint64) {
	stop := make(chan struct{})
	res := make(chan uint64)
	go func() {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var peak uint64
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-t.C:
			case <-stop:
				res <- peak
				return
			case res <- peak:
			}
		}
	}()
	return stop, func() uint64 { return <-res }
}
