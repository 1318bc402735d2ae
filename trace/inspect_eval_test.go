package trace

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeZip writes a zip of the given entries; raw entries are written
// with the header given, their data as is (already deflated), so that a
// test can make the zip lie about its sizes as a zip bomb does.
func writeZip(t *testing.T, entries []zipEntry) string {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range entries {
		if e.header != nil {
			w, err := zw.CreateRaw(e.header)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(e.data)
			continue
		}
		w, err := zw.Create(e.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(e.data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "log.eval")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type zipEntry struct {
	name   string
	data   []byte
	header *zip.FileHeader
}

func deflated(t *testing.T, n int) []byte {
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, flate.BestCompression)
	w.Write(make([]byte, n))
	w.Close()
	return b.Bytes()
}

// readAll reads a file to its end and returns the open error, or the
// rows' errors and the file warnings as text.
func readAll(t *testing.T, path string) (string, error) {
	t.Helper()
	src, err := Open(path, Options{})
	if err != nil {
		return "", err
	}
	defer src.Close()
	var b strings.Builder
	for {
		row, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return b.String(), err
		}
		for _, e := range row.Errors {
			b.WriteString(e.Error() + "\n")
		}
	}
	for _, w := range src.Warnings() {
		b.WriteString(w.Error() + "\n")
	}
	return b.String(), nil
}

func TestInspectEvalRefusals(t *testing.T) {
	header := []byte(`{"version":2,"status":"success","eval":{"task":"t"}}`)
	bomb := deflated(t, 4<<20)
	tests := []struct {
		name    string
		entries []zipEntry
		want    string
	}{
		{"not an Inspect log", []zipEntry{{name: "word/document.xml", data: []byte("<x/>")}},
			"log.eval: a zip archive, but not an Inspect .eval log: it has neither header.json nor _journal/start.json"},
		{"declares a huge entry", []zipEntry{{name: "header.json", data: header},
			{header: &zip.FileHeader{Name: "samples/1_epoch_1.json", Method: zip.Deflate, CompressedSize64: uint64(len(bomb)), UncompressedSize64: 1 << 30}, data: bomb}},
			"samples/1_epoch_1.json would unpack to"},
		{"unpacks to more than it declares", []zipEntry{{name: "header.json", data: header},
			{header: &zip.FileHeader{Name: "samples/1_epoch_1.json", Method: zip.Deflate, CompressedSize64: uint64(len(bomb)), UncompressedSize64: 100}, data: bomb}},
			"samples/1_epoch_1.json unpacks to more than the zip says it holds, or is damaged (a zip bomb?)"},
		{"no samples", []zipEntry{{name: "header.json", data: header}},
			`this Inspect log holds no samples (status "success")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(t, writeZip(t, tt.entries))
			if err != nil {
				got += err.Error()
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want it to say %q", got, tt.want)
			}
			if strings.Contains(got, "UTF-8") {
				t.Errorf("a zip is read as text: %q", got)
			}
		})
	}
}

// A .eval file cut short is one clear error, not a flood of text errors.
func TestInspectEvalTruncated(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "inspect_0.3.140.eval"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cut.eval")
	os.WriteFile(p, data[:len(data)/2], 0o644)
	_, err = readAll(t, p)
	if err == nil || !strings.Contains(err.Error(), "cut.eval: a zip archive that cannot be read (zip: not a valid zip file)") {
		t.Errorf("err = %v", err)
	}
}
