// Package bytesize reads and writes sizes in bytes the way people write
// them: 64MB, 1.5 GB, 300KB, 1024. Units are binary (1 KB = 1024 bytes).
// It imports only the standard library.
package bytesize

import (
	"fmt"
	"strconv"
	"strings"
)

// Format renders n for messages: 1.5 MB, 64.0 KB, 300 bytes.
func Format(n int64) string {
	switch {
	case n >= 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<30), 'f', 1, 64) + " GB"
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// Parse reads a size: a number of bytes, or a number with B, KB, MB or GB
// (K, M, G, KiB, MiB, GiB too), any case, spaces allowed.
func Parse(s string) (int64, error) {
	t := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
	units := []struct {
		suffix string
		mult   float64
	}{{"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}}
	mult := 1.0
	for _, u := range units {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = rest, u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("%q is not a size such as 64MB or 1GB", s)
	}
	return int64(f * mult), nil
}

// Value is a size as a command-line flag.
type Value struct{ N *int64 }

func (v Value) String() string {
	if v.N == nil || *v.N == 0 {
		return ""
	}
	return Format(*v.N)
}

// Set parses s.
func (v Value) Set(s string) error {
	n, err := Parse(s)
	if err != nil {
		return err
	}
	*v.N = n
	return nil
}

// Type names the flag's kind in help.
func (Value) Type() string { return "size" }
