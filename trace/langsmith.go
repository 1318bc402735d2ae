package trace

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/agenteval/agenteval/internal/messages"
)

// LangSmith run exports. A run is {id, trace_id, parent_run_id,
// dotted_order, name, run_type (llm, chain, tool, retriever, prompt,
// parser, embedding), start_time, end_time, inputs, outputs, error, extra:
// {invocation_params, metadata}, tags, session_name, child_runs}. A file
// holds runs as JSON lines, a JSON array, {"runs": [...]}, or the batches
// the langsmith SDK sends to /runs/batch: {post: [run, ...], patch: [run,
// ...]}, where a run's inputs come in its post and its outputs and end
// time in a later patch (possibly of another batch). Parts of one run are
// merged by id.
//
// Runs group into a conversation by the thread LangSmith shows them in
// (extra.metadata session_id, thread_id or conversation_id), else by
// trace. Within it, llm runs are model calls (their inputs the history,
// their outputs the reply), tool runs are tool executions, and the root
// chain run gives the user's input and the final answer; the conversation
// is assembled from them as from spans.
//
// Messages are read in every form LangChain's tracer and the SDK's
// wrappers write: LangChain's serialized messages ({lc, type:
// "constructor", id: [..., "AIMessage"], kwargs}), chat models' inputs
// {messages: [[...]]} and outputs {generations: [[{text, message}]],
// llm_output}, OpenAI request and ChatCompletion dicts (wrap_openai:
// {messages} in, {choices: [{message}]} out), and plain text.
//
// Source: langchain-ai/langsmith-sdk, python/langsmith/schemas.py (Run,
// RunBase), client.py (batch_ingest_runs: post and patch), run_trees.py;
// langchain_core/tracers/base.py and schemas.py (the tracer's run inputs
// and outputs), load/dump.py (serialized messages).

func openLangSmith(in *input) (convReader, error) {
	r, err := in.reader()
	if err != nil {
		return nil, err
	}
	var fileWarn []problem
	return newPullReader(&fileWarn, func(yield func(*conv, error) bool) {
		ls := &langSmith{byID: map[string]*lsRun{}}
		err := streamValues(r, func(raw json.RawMessage, _ map[string]json.RawMessage, pos Pos, bad error) bool {
			if bad != nil {
				fileWarn = append(fileWarn, warnAt(pos, bad.Error()))
				return true
			}
			ls.item(raw, pos, &fileWarn)
			return true
		})
		for _, c := range ls.conversations(&fileWarn) {
			if !yield(c, nil) {
				return
			}
		}
		if err != nil {
			yield(nil, err)
		}
	}), nil
}

type langSmith struct {
	byID  map[string]*lsRun
	order []*lsRun
	ad    argDecoder
}

// lsRun is one run, its post and patch merged.
type lsRun struct {
	f   map[string]any
	pos Pos
	ord int
}

// item reads one top-level value: a run, a list of runs, a batch.
func (ls *langSmith) item(raw json.RawMessage, pos Pos, warn *[]problem) {
	v, err := ls.ad.decode(string(raw))
	if err != nil {
		*warn = append(*warn, warnAt(pos, "malformed JSON: "+err.Error()))
		return
	}
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			ls.run(e, pos, fmt.Sprintf("[%d]", i), warn)
		}
	case map[string]any:
		batch := false
		for _, k := range []string{"post", "patch", "runs"} {
			if l, ok := x[k].([]any); ok {
				batch = true
				for i, e := range l {
					ls.run(e, pos, fmt.Sprintf("%s[%d]", k, i), warn)
				}
			}
		}
		if !batch {
			ls.run(x, pos, "", warn)
		}
	default:
		*warn = append(*warn, warnAt(pos, fmt.Sprintf("a LangSmith export holds runs (objects), not %s; left out", messages.KindOf(v))))
	}
}

func (ls *langSmith) run(v any, pos Pos, where string, warn *[]problem) {
	m := obj(v)
	if m == nil {
		*warn = append(*warn, warnAt(pos, fmt.Sprintf("%s is %s, not a run; left out", strings.TrimSpace("run "+where), messages.KindOf(v))))
		return
	}
	for _, ch := range list(m["child_runs"]) {
		// read_run(load_child_runs=True) nests the tree.
		ls.run(ch, pos, where+".child_runs", warn)
	}
	id := str(m, "id")
	if id == "" {
		*warn = append(*warn, warnAt(pos, fmt.Sprintf("%s has no id; left out", strings.TrimSpace("run "+where))))
		return
	}
	r := ls.byID[id]
	if r == nil {
		r = &lsRun{f: map[string]any{}, pos: pos, ord: len(ls.order)}
		ls.byID[id] = r
		ls.order = append(ls.order, r)
	}
	for k, val := range m {
		if k == "child_runs" || val == nil {
			continue
		}
		if k == "extra" {
			// A patch's extra adds to the post's.
			if old := obj(r.f["extra"]); old != nil {
				for ek, ev := range obj(val) {
					old[ek] = ev
				}
				continue
			}
		}
		r.f[k] = val
	}
}

// conversations groups the runs and assembles each group.
func (ls *langSmith) conversations(warn *[]problem) []*conv {
	root := func(r *lsRun) string {
		if t := str(r.f, "trace_id"); t != "" {
			return t
		}
		seen := map[string]bool{}
		for {
			p := str(r.f, "parent_run_id")
			id := str(r.f, "id")
			if p == "" || seen[p] || ls.byID[p] == nil {
				if p != "" && ls.byID[p] == nil {
					return p
				}
				return id
			}
			seen[id] = true
			r = ls.byID[p]
		}
	}
	traceThread := map[string]string{}
	for _, r := range ls.order {
		if th := lsThread(r.f); th != "" {
			if t := root(r); traceThread[t] == "" {
				traceThread[t] = th
			}
		}
	}
	groups := map[string][]*lsRun{}
	var keys []string
	for _, r := range ls.order {
		t := root(r)
		k := t
		if th := traceThread[t]; th != "" {
			k = th
		}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	var out []*conv
	for _, k := range keys {
		runs := groups[k]
		sort.SliceStable(runs, func(i, j int) bool {
			a, b := str(runs[i].f, "dotted_order"), str(runs[j].f, "dotted_order")
			if a != "" && b != "" && a != b {
				return a < b
			}
			return runs[i].ord < runs[j].ord
		})
		recs := make([]*record, 0, len(runs))
		for i, r := range runs {
			rec := ls.record(r)
			rec.ord = i
			recs = append(recs, rec)
		}
		c := assemble("langsmith", k, recs)
		if c == nil {
			*warn = append(*warn, warnAt(runs[0].pos, fmt.Sprintf("trace %s has no model call, tool run or root run with messages (%d runs); skipped", k, len(runs))))
			continue
		}
		if c.sample != nil {
			if p := str(runs[0].f, "session_name"); p != "" {
				c.sample.Metadata["langsmith_project"] = p
			}
		}
		out = append(out, c)
	}
	return out
}

// lsThread is the thread a run belongs to, as LangSmith groups them.
func lsThread(f map[string]any) string {
	md := obj(obj(f["extra"])["metadata"])
	return str(md, "session_id", "thread_id", "conversation_id")
}

// record maps one run.
func (ls *langSmith) record(r *lsRun) *record {
	f := r.f
	rec := &record{pos: r.pos, trace: str(f, "trace_id"), span: str(f, "id"), parent: str(f, "parent_run_id"), name: str(f, "name"),
		start: isoNanos(str(f, "start_time")), end: isoNanos(str(f, "end_time"))}
	inputs, outputs := f["inputs"], f["outputs"]
	errText := str(f, "error")
	switch rt := str(f, "run_type"); rt {
	case "llm":
		rec.kind = kindLLM
		rec.model = lsModel(f)
		rec.input = ls.messages(inputs, rec, "inputs")
		rec.usage = usage{} // the history's messages carry earlier calls' usage
		rec.output = firstChoice(ls.outputMessages(outputs, rec), rec.pos, "outputs", &rec.problems)
		if !rec.usage.set {
			rec.usage = lsUsage(f)
		}
	case "tool":
		rec.kind = kindTool
		t := &toolExec{}
		t.call = ls.toolArgs(inputs, rec)
		t.call.name = rec.name
		t.result, t.call.id, t.hasResult = lsToolResult(outputs, &ls.ad)
		if errText != "" {
			t.isError = true
			if !t.hasResult {
				t.result, t.hasResult = errText, true
			}
		}
		rec.tool = t
	default:
		if rec.parent != "" {
			// Chains inside the trace are how the agent is built, not
			// turns: what they pass on is in the model calls and tools.
			rec.kind = kindIgnored
			return rec
		}
		rec.kind = kindAgent
		rec.agent = rec.name
		rec.input = ls.messages(inputs, rec, "inputs")
		out := ls.outputMessages(outputs, rec)
		// Its usage is its model calls', counted there.
		rec.usage = usage{}
		// A graph returns its whole state; its answer is the last reply.
		for i := len(out) - 1; i >= 0; i-- {
			if out[i].role == "assistant" {
				rec.output = out[i : i+1]
				break
			}
		}
	}
	return rec
}

// messages reads a run's inputs as a message list.
func (ls *langSmith) messages(v any, rec *record, where string) []msg {
	m := obj(v)
	if m == nil {
		if s, ok := v.(string); ok && s != "" {
			return []msg{{role: "user", content: s}}
		}
		return nil
	}
	if ms, ok := m["messages"]; ok {
		l := list(ms)
		if len(l) > 0 {
			if inner, ok := l[0].([]any); ok {
				// A chat model's batch of prompts; the first is this call's.
				l = inner
			}
		}
		return ls.msgList(l, rec, where+".messages")
	}
	if ps := list(m["prompts"]); len(ps) > 0 {
		return []msg{{role: "user", content: text(ps[0])}}
	}
	for _, k := range []string{"input", "question", "query", "prompt"} {
		if s, ok := m[k].(string); ok && len(m) <= 2 {
			return []msg{{role: "user", content: s}}
		}
	}
	return nil
}

// outputMessages reads a run's outputs: generations, a ChatCompletion, a
// message, a state with messages, or text.
func (ls *langSmith) outputMessages(v any, rec *record) []msg {
	m := obj(v)
	if m == nil {
		if s, ok := v.(string); ok && s != "" {
			return []msg{{role: "assistant", content: s}}
		}
		return nil
	}
	if gens := list(m["generations"]); len(gens) > 0 {
		g := gens[0]
		if inner, ok := g.([]any); ok && len(inner) > 0 {
			g = inner[0]
		}
		gm := obj(g)
		if msgV, ok := gm["message"]; ok {
			out := ls.msgList([]any{msgV}, rec, "outputs.generations[0][0].message")
			if len(out) > 0 {
				if tu := obj(obj(m["llm_output"])["token_usage"]); tu != nil && !rec.usage.set {
					rec.usage.input, _ = intOf(tu["prompt_tokens"])
					rec.usage.output, _ = intOf(tu["completion_tokens"])
					rec.usage.set = true
				}
				return out
			}
		}
		if t := str(gm, "text"); t != "" {
			return []msg{{role: "assistant", content: t}}
		}
		return nil
	}
	if ch := list(m["choices"]); len(ch) > 0 {
		if u := obj(m["usage"]); u != nil && !rec.usage.set {
			rec.usage.input, _ = intOf(u["prompt_tokens"])
			rec.usage.output, _ = intOf(u["completion_tokens"])
			rec.usage.set = true
		}
		var out []msg
		for i, c := range ch {
			out = append(out, ls.msgList([]any{obj(c)["message"]}, rec, fmt.Sprintf("outputs.choices[%d].message", i))...)
		}
		return out
	}
	if msgV, ok := m["message"]; ok {
		return ls.msgList([]any{msgV}, rec, "outputs.message")
	}
	if ms := list(m["messages"]); len(ms) > 0 {
		return ls.msgList(ms, rec, "outputs.messages")
	}
	if _, ok := m["role"]; ok {
		return ls.msgList([]any{m}, rec, "outputs")
	}
	for _, k := range []string{"output", "answer", "content", "text"} {
		switch x := m[k].(type) {
		case string:
			return []msg{{role: "assistant", content: x}}
		case map[string]any:
			return ls.msgList([]any{x}, rec, "outputs."+k)
		}
	}
	return nil
}

// msgList reads messages in any of LangChain's dump forms or OpenAI's.
func (ls *langSmith) msgList(l []any, rec *record, where string) []msg {
	var out []msg
	for i, it := range l {
		m := obj(it)
		if m == nil {
			if s, ok := it.(string); ok {
				out = append(out, msg{role: "user", content: s})
				continue
			}
			rec.problems = append(rec.problems, warnAt(rec.pos, fmt.Sprintf("%s[%d] is %s, not a message; left out", where, i, messages.KindOf(it))))
			continue
		}
		lm, ok := langChainMessage(&ls.ad, m, rec.pos, fmt.Sprintf("%s[%d]", where, i), &rec.problems, &rec.usage)
		if ok {
			out = append(out, lm)
		}
	}
	return out
}

// toolArgs reads a tool run's inputs as the call's arguments: the inputs
// themselves, or the object a single "input" holds as JSON text.
func (ls *langSmith) toolArgs(v any, rec *record) call {
	m := obj(v)
	if s, ok := m["input"].(string); ok && len(m) == 1 {
		if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") {
			if d, err := ls.ad.decode(t); err == nil {
				if dm := obj(d); dm != nil {
					return ls.ad.args(dm, rec.pos, "inputs.input", &rec.problems)
				}
			}
		}
	}
	if m == nil {
		m = map[string]any{}
		if v != nil {
			m["input"] = v
		}
	}
	return ls.ad.args(m, rec.pos, "inputs", &rec.problems)
}

// lsToolResult reads a tool run's outputs: {output: text or a serialized
// ToolMessage}, and the id of the call the ToolMessage answers.
func lsToolResult(v any, ad *argDecoder) (result, callID string, ok bool) {
	m := obj(v)
	if m == nil {
		if v == nil {
			return "", "", false
		}
		return ad.text(v), "", true
	}
	out, has := m["output"]
	if !has {
		return ad.text(m), "", true
	}
	if om := obj(out); om != nil {
		data := om
		if om["lc"] != nil {
			data = obj(om["kwargs"])
		}
		if c, ok := data["content"]; ok {
			var probs []problem // the result's text is what matters here
			body := contentText(c, Pos{}, "outputs.output.content", &probs)
			return body.Text, str(data, "tool_call_id"), true
		}
	}
	return ad.text(out), "", true
}

func lsModel(f map[string]any) string {
	ex := obj(f["extra"])
	if m := str(obj(ex["invocation_params"]), "model", "model_name"); m != "" {
		return m
	}
	return str(obj(ex["metadata"]), "ls_model_name")
}

func lsUsage(f map[string]any) usage {
	var u usage
	if n, ok := intOf(f["prompt_tokens"]); ok {
		u.input, u.set = n, true
	}
	if n, ok := intOf(f["completion_tokens"]); ok {
		u.output, u.set = n, true
	}
	return u
}
