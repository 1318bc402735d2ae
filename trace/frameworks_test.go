package trace

import (
	"path/filepath"
	"testing"
)

// gFixtures are the files the frameworks' own libraries wrote (see
// testdata/README.md), with the format to force ("" detects it). Each
// has a golden reading under testdata/golden/frameworks/, and a
// reference made of its own calls scores 1.
var gFixtures = []struct{ file, format string }{
	{"frameworks/openai_agents_js_0.20.0_chat.jsonl", ""},
	{"frameworks/openai_agents_js_0.20.0_responses.jsonl", ""},
	{"frameworks/openai_agents_python_0.17.3_chat.jsonl", ""},
	{"frameworks/vercel_ai_7.0.173_genai.jsonl", ""},
	{"frameworks/vercel_ai_7.0.173_legacy.jsonl", ""},
	{"frameworks/vercel_ai_7.0.173_legacy_stream.jsonl", ""},
	{"frameworks/vercel_ai_7.0.173_genai_readablespans.json", ""},
	{"frameworks/adk_js_2.0.0.jsonl", ""},
	{"frameworks/adk_python_1.38.0.jsonl", ""},
	{"frameworks/mastra_1.71.0_thread.jsonl", ""},
	{"frameworks/mastra_1.71.0.jsonl", ""},
	{"frameworks/langgraph_1.7.3_openinference_4.1.1.jsonl", ""},
	{"frameworks/langchain_1.4.0_openinference_4.1.1.jsonl", ""},
	{"frameworks/phoenix_client_6.14.2_spans.json", ""},
	{"frameworks/phoenix_client_6.14.2_otlpv1_spans.json", ""},
	{"frameworks/langfuse_core_5.11.1_traces.jsonl", ""},
}

func TestGoldenFrameworks(t *testing.T) {
	for _, f := range gFixtures {
		t.Run(f.file, func(t *testing.T) {
			checkGolden(t, f.file, f.format)
		})
	}
}

func TestFrameworksOwnReferenceScoresOne(t *testing.T) {
	for _, f := range gFixtures {
		t.Run(f.file, func(t *testing.T) {
			checkOwnReference(t, filepath.Join("testdata", f.file), f.format)
		})
	}
}
