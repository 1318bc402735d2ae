package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"
)

// memProfile takes heap profiles of a run for whoever measures its memory:
// AGENTEVAL_MEMPROFILE=FILE (not documented; a tool for the load run)
// writes FILE.loaded once the run is planned, FILE.peak as the heap stood
// at its largest from the start (checked every 100 ms, kept in memory
// until the end), FILE.end when the run is over, and FILE.memstats: the
// runtime's memory and the process's largest mappings. Without the
// variable it does nothing.
type memProfile struct {
	file string
	stop chan struct{}
	done sync.WaitGroup

	mu   sync.Mutex
	peak []byte
	max  uint64
}

// startMemProfile starts the sampler when AGENTEVAL_MEMPROFILE is set.
func startMemProfile(stderr io.Writer) *memProfile {
	file := os.Getenv("AGENTEVAL_MEMPROFILE")
	if file == "" {
		return nil
	}
	m := &memProfile{file: file, stop: make(chan struct{})}
	m.done.Add(1)
	go m.sample()
	return m
}

// loaded writes the profile of the loaded, planned run.
func (m *memProfile) loaded(stderr io.Writer) {
	if m != nil {
		m.write(stderr, ".loaded", nil)
	}
}

// sample keeps the profile of the largest live heap seen so far.
func (m *memProfile) sample() {
	defer m.done.Done()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		metrics.Read(s)
		live := s[0].Value.Uint64()
		if live <= m.max+m.max/20 {
			continue
		}
		m.max = live
		var b bytes.Buffer
		if err := pprof.Lookup("heap").WriteTo(&b, 0); err == nil {
			m.mu.Lock()
			m.peak = b.Bytes()
			m.mu.Unlock()
		}
	}
}

// finish writes the peak's profile and the last one.
func (m *memProfile) finish(stderr io.Writer) {
	if m == nil {
		return
	}
	close(m.stop)
	m.done.Wait()
	m.mu.Lock()
	peak := m.peak
	m.mu.Unlock()
	if peak != nil {
		m.write(stderr, ".peak", peak)
	}
	m.write(stderr, ".end", nil)
	// What the heap profiles do not show: the runtime's own memory, and
	// what the process holds outside Go's heap.
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var b bytes.Buffer
	mb := func(n uint64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }
	fmt.Fprintf(&b, "Sys %s\nHeapSys %s\nHeapInuse %s\nHeapIdle %s\nHeapReleased %s\nStackSys %s\nMSpanSys %s\nGCSys %s\nOtherSys %s\nNextGC %s\nNumGC %d\n",
		mb(ms.Sys), mb(ms.HeapSys), mb(ms.HeapInuse), mb(ms.HeapIdle), mb(ms.HeapReleased), mb(ms.StackSys), mb(ms.MSpanSys), mb(ms.GCSys), mb(ms.OtherSys), mb(ms.NextGC), ms.NumGC)
	if st, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range bytes.Split(st, []byte("\n")) {
			if bytes.HasPrefix(l, []byte("Vm")) || bytes.HasPrefix(l, []byte("Rss")) {
				b.Write(l)
				b.WriteByte('\n')
			}
		}
	}
	// The mappings that hold more than a megabyte.
	if sm, err := os.ReadFile("/proc/self/smaps"); err == nil {
		var head []byte
		for _, l := range bytes.Split(sm, []byte("\n")) {
			if f := bytes.Fields(l); len(f) >= 5 && !bytes.HasSuffix(f[0], []byte(":")) {
				head = l
			} else if len(f) == 3 && string(f[0]) == "Rss:" {
				if kb, _ := strconv.Atoi(string(f[1])); kb >= 1024 {
					fmt.Fprintf(&b, "%6d kB  %s\n", kb, head)
				}
			}
		}
	}
	if err := os.WriteFile(m.file+".memstats", b.Bytes(), 0o644); err != nil {
		fmt.Fprintf(stderr, "agenteval: memory profile: %v\n", err)
	}
}

// write writes a profile to the file with the given suffix: data, or the
// heap as the last collection left it.
func (m *memProfile) write(stderr io.Writer, suffix string, data []byte) {
	if data == nil {
		runtime.GC()
		var b bytes.Buffer
		if err := pprof.Lookup("heap").WriteTo(&b, 0); err != nil {
			fmt.Fprintf(stderr, "agenteval: memory profile: %v\n", err)
			return
		}
		data = b.Bytes()
	}
	if err := os.WriteFile(m.file+suffix, data, 0o644); err != nil {
		fmt.Fprintf(stderr, "agenteval: memory profile: %v\n", err)
	}
}
