package bytesize

import "testing"

func TestParseAndFormat(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"1024", 1024}, {"64MB", 64 << 20}, {"64 mb", 64 << 20}, {"1.5GB", 3 << 29}, {"300KB", 300 << 10}, {"2MiB", 2 << 20}, {"7B", 7}, {"1k", 1024},
	}
	for _, tt := range tests {
		if got, err := Parse(tt.in); err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "lots", "-1MB", "MB"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
	if Format(3<<19) != "1.5 MB" || Format(300) != "300 bytes" || Format(64<<10) != "64.0 KB" {
		t.Errorf("Format: %s %s %s", Format(3<<19), Format(300), Format(64<<10))
	}
}
