package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// writeSpans writes an OTLP JSON lines file of conversations, each an
// invoke_agent span, three chat spans with growing histories, two
// execute_tool spans and an HTTP span: nine spans. Export requests hold
// perLine spans of several conversations at a time, as batch exporters
// interleave them, so that conversations stay open across lines.
func writeSpans(w io.Writer, conversations, perLine int) (spans int) {
	bw := bufio.NewWriterSize(w, 1<<20)
	defer bw.Flush()
	str := func(k, v string) map[string]any {
		return map[string]any{"key": k, "value": map[string]any{"stringValue": v}}
	}
	num := func(k string, v int) map[string]any {
		return map[string]any{"key": k, "value": map[string]any{"intValue": fmt.Sprint(v)}}
	}
	part := func(t, c string) string { return fmt.Sprintf(`{"type":%q,"content":%q}`, t, c) }
	var batch []any
	flush := func() {
		if len(batch) == 0 {
			return
		}
		req := map[string]any{"resourceSpans": []any{map[string]any{
			"resource":   map[string]any{"attributes": []any{str("service.name", "bench-agent")}},
			"scopeSpans": []any{map[string]any{"scope": map[string]any{"name": "bench"}, "spans": batch}},
		}}}
		b, _ := json.Marshal(req)
		bw.Write(b)
		bw.WriteByte('\n')
		batch = batch[:0]
	}
	add := func(s map[string]any) {
		batch = append(batch, s)
		spans++
		if len(batch) >= perLine {
			flush()
		}
	}
	t0 := int64(1763856000000000000)
	// Conversations run four at a time, their spans interleaved.
	const parallel = 4
	for base := 0; base < conversations; base += parallel {
		for step := 0; step < 9; step++ {
			for c := base; c < base+parallel && c < conversations; c++ {
				conv := fmt.Sprintf("conv-%06d", c)
				trace := fmt.Sprintf("%032x", c+1)
				ts := t0 + int64(c)*10_000_000_000 + int64(step)*100_000_000
				user := `{"role":"user","parts":[` + part("text", fmt.Sprintf("Book a table for %d people at 8pm, conversation %d", c%8+1, c)) + `]}`
				call := func(i int) string {
					return fmt.Sprintf(`{"role":"assistant","parts":[{"type":"tool_call","id":"call_%d","name":"search","arguments":{"q":"table %d"}}]}`, i, i)
				}
				result := func(i int) string {
					return fmt.Sprintf(`{"role":"tool","parts":[{"type":"tool_call_response","id":"call_%d","response":"found %d restaurants"}]}`, i, i)
				}
				sp := map[string]any{"traceId": trace, "spanId": fmt.Sprintf("%016x", c*16+step+1), "parentSpanId": fmt.Sprintf("%016x", c*16+1),
					"startTimeUnixNano": fmt.Sprint(ts), "endTimeUnixNano": fmt.Sprint(ts + 90_000_000), "kind": 1}
				attrs := []any{str("gen_ai.conversation.id", conv)}
				switch step {
				case 0, 3, 6:
					k := step / 3
					hist := []string{user}
					for i := 0; i < k; i++ {
						hist = append(hist, call(i), result(i))
					}
					out := call(k)
					if k == 2 {
						out = `{"role":"assistant","parts":[` + part("text", "Booked.") + `]}`
					}
					in, _ := json.Marshal(json.RawMessage("[" + join(hist) + "]"))
					sp["name"] = "chat gpt-4o-mini"
					attrs = append(attrs, str("gen_ai.operation.name", "chat"), str("gen_ai.request.model", "gpt-4o-mini"),
						str("gen_ai.input.messages", string(in)), str("gen_ai.output.messages", "["+out+"]"),
						num("gen_ai.usage.input_tokens", 100+50*k), num("gen_ai.usage.output_tokens", 20))
				case 1, 4:
					i := step / 3
					sp["name"] = "execute_tool search"
					attrs = append(attrs, str("gen_ai.operation.name", "execute_tool"), str("gen_ai.tool.name", "search"),
						str("gen_ai.tool.call.id", fmt.Sprintf("call_%d", i)), str("gen_ai.tool.call.arguments", fmt.Sprintf(`{"q":"table %d"}`, i)),
						str("gen_ai.tool.call.result", fmt.Sprintf("found %d restaurants", i)))
				case 2, 5, 7:
					sp["name"] = "GET /v1/restaurants"
					attrs = []any{str("http.request.method", "GET"), num("http.response.status_code", 200)}
				case 8:
					sp["name"] = "invoke_agent bench-agent"
					delete(sp, "parentSpanId")
					sp["spanId"] = fmt.Sprintf("%016x", c*16+1)
					sp["startTimeUnixNano"] = fmt.Sprint(t0 + int64(c)*10_000_000_000)
					attrs = append(attrs, str("gen_ai.operation.name", "invoke_agent"), str("gen_ai.agent.name", "bench-agent"))
				}
				sp["attributes"] = attrs
				add(sp)
			}
		}
	}
	flush()
	return spans
}

func join(parts []string) string {
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += ","
		}
		out += p
	}
	return out
}

// BenchmarkReadOTLP reads 100,000 spans (11,112 conversations of nine) and
// reports spans per second and the heap in use at the end, which stays
// flat: conversations are handed over as soon as their last span is read.
func BenchmarkReadOTLP(b *testing.B) {
	path := filepath.Join(b.TempDir(), "spans.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	spans := writeSpans(f, 100_000/9+1, 200)
	f.Close()
	st, _ := os.Stat(path)
	b.ResetTimer()
	var peak uint64
	for i := 0; i < b.N; i++ {
		src, err := Open(path, Options{Format: "otlp"})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			row, err := src.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if len(row.Errors) > 0 {
				b.Fatal(row.Errors[0])
			}
			n++
			if n%2000 == 0 {
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
		src.Close()
		if n != 100_000/9+1 {
			b.Fatalf("read %d conversations", n)
		}
	}
	b.ReportMetric(float64(spans)*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(st.Size())/(1<<20), "file-MiB")
}

// TestWriteSpans writes the benchmark's file for measuring the CLI:
// AGENTEVAL_WRITE_SPANS=/tmp/spans.jsonl go test ./trace -run TestWriteSpans
func TestWriteSpans(t *testing.T) {
	path := os.Getenv("AGENTEVAL_WRITE_SPANS")
	if path == "" {
		t.Skip("set AGENTEVAL_WRITE_SPANS=FILE to write the 100,000-span file")
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 100_000
	if s := os.Getenv("AGENTEVAL_SPANS"); s != "" {
		fmt.Sscan(s, &n)
	}
	t.Logf("%d spans", writeSpans(f, n/9+1, 200))
}
