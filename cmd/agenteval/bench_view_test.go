package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/store"
	"github.com/agenteval/agenteval/store/sqlite"
)

// procKB reads a field of /proc/PID/status, in kB.
func procKB(pid int, field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	m := regexp.MustCompile(field + `:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// BenchmarkViewMemory fills a store with 100 runs of 200 conversation
// tests each, starts agenteval view on it, and opens the list of runs,
// every run's page, and a comparison: rss-MB is the viewer's resident
// memory afterwards, peak-MB its high-water mark, idle-MB what it holds
// before the first request (mostly the binary's own pages). Pages stream from the
// store, so neither grows with the number or size of runs.
func BenchmarkViewMemory(b *testing.B) {
	dir := b.TempDir()
	db, err := sqlite.Open(filepath.Join(dir, ".agenteval", "agenteval.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := range 100 {
		h := &results.Header{RunID: fmt.Sprintf("run%09d", i), Started: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour),
			Command: "run", Suites: []results.SuiteFile{{Path: "bookings.yaml", Name: "bookings"}}, Target: "openai:gpt-4o-mini"}
		if err := db.StartRun(ctx, h); err != nil {
			b.Fatal(err)
		}
		for k := range 200 {
			db.AddResult(h.RunID, synthetic(i*200+k))
		}
		if err := db.FinishRun(ctx, h.RunID, store.Finish{Status: store.Done, DurationMS: 60000}); err != nil {
			b.Fatal(err)
		}
	}
	db.Close()
	var storeMB float64
	if st, err := os.Stat(filepath.Join(dir, ".agenteval", "agenteval.db")); err == nil {
		storeMB = float64(st.Size()) / 1e6
	}
	// The real binary, not the test binary, whose size would count.
	bin := filepath.Join(b.TempDir(), "agenteval")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	for b.Loop() {
		b.ReportMetric(storeMB, "store-MB")
		cmd := exec.Command(bin, "view", "--port", "0")
		cmd.Dir = dir
		out, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			cmd.Process.Kill()
			b.Fatalf("view said nothing: %v", err)
		}
		url := regexp.MustCompile(`http://\S+/`).FindString(line)
		fetch := func(path string) int64 {
			resp, err := http.Get(strings.TrimSuffix(url, "/") + path)
			if err != nil {
				b.Fatal(err)
			}
			defer resp.Body.Close()
			n, _ := io.Copy(io.Discard, resp.Body)
			if resp.StatusCode != 200 {
				b.Fatalf("%s: %d", path, resp.StatusCode)
			}
			return n
		}
		b.ReportMetric(procKB(cmd.Process.Pid, "VmRSS")/1024, "idle-MB")
		begin := time.Now()
		fetch("/")
		b.ReportMetric(float64(time.Since(begin).Milliseconds()), "list-ms")
		begin = time.Now()
		var bytes int64
		for i := range 100 {
			bytes += fetch(fmt.Sprintf("/runs/run%09d", i))
		}
		b.ReportMetric(float64(time.Since(begin).Milliseconds())/100, "page-ms")
		b.ReportMetric(float64(bytes)/100/1e6, "page-MB")
		fetch("/compare?base=run000000000&new=run000000099")
		fetch("/api/runs")
		b.ReportMetric(procKB(cmd.Process.Pid, "VmRSS")/1024, "rss-MB")
		b.ReportMetric(procKB(cmd.Process.Pid, "VmHWM")/1024, "peak-MB")
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
	}
}
