package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"time"
)

// memProfile takes heap profiles of a run for whoever measures its memory:
// AGENTEVAL_MEMPROFILE=FILE (not documented; a tool for the load run)
// writes FILE.loaded once the run is planned, FILE.peak as the heap stood
// at its largest (checked every 100 ms, kept in memory until the end), and
// FILE.end when the run is over. Without the variable it does nothing.
type memProfile struct {
	file string
	stop chan struct{}
	done sync.WaitGroup

	mu   sync.Mutex
	peak []byte
	max  uint64
}

// startMemProfile starts the sampler when AGENTEVAL_MEMPROFILE is set; the
// profile after loading is written at once.
func startMemProfile(stderr io.Writer) *memProfile {
	file := os.Getenv("AGENTEVAL_MEMPROFILE")
	if file == "" {
		return nil
	}
	m := &memProfile{file: file, stop: make(chan struct{})}
	m.write(stderr, ".loaded", nil)
	m.done.Add(1)
	go m.sample()
	return m
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
