package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// summarize counts the agreements and groups the differences by cause.
func (c *Comparison) summarize() {
	c.Counts = Counts{Listed: len(c.Tests)}
	type key struct{ aspect, cause string }
	groups := map[key]*Group{}
	for i := range c.Tests {
		t := &c.Tests[i]
		switch {
		case t.InAgentV && t.InAgenteval:
			c.Counts.Both++
			if t.ScoreAgree {
				c.Counts.ScoreAgree++
			}
			if t.AgentAgree {
				c.Counts.AgentAgree++
			}
			if t.JudgeAgree {
				c.Counts.JudgeAgree++
			}
			if t.ScoreAgree && t.AgentAgree && t.JudgeAgree {
				c.Counts.AllAgree++
			}
		case t.InAgentV:
			c.Counts.OnlyAgentV++
		case t.InAgenteval:
			c.Counts.OnlyAgenteval++
		}
		counted := map[key]bool{}
		for _, d := range t.Diffs {
			k := key{d.Aspect, d.Cause}
			g := groups[k]
			if g == nil {
				g = &Group{Aspect: d.Aspect, Cause: d.Cause, Reason: reasonFor(d.Aspect, d.Cause), Example: t.name(), Detail: d.Detail}
				groups[k] = g
			}
			if !counted[k] {
				counted[k] = true
				g.Tests++
			}
		}
	}
	c.Groups = c.Groups[:0]
	for _, g := range groups {
		c.Groups = append(c.Groups, *g)
	}
	order := map[string]int{aspectRan: 0, aspectScore: 1, aspectAgent: 2, aspectJudge: 3}
	sort.Slice(c.Groups, func(i, j int) bool {
		a, b := c.Groups[i], c.Groups[j]
		if a.Aspect != b.Aspect {
			return order[a.Aspect] < order[b.Aspect]
		}
		if a.Tests != b.Tests {
			return a.Tests > b.Tests
		}
		return a.Cause < b.Cause
	})
}

// writeReport writes the comparison as Markdown.
func writeReport(w io.Writer, c *Comparison) error {
	var b strings.Builder
	n := c.Counts
	fmt.Fprintf(&b, "# agenteval and AgentV %s on AgentV's examples at %s\n\n", c.Meta.AgentV, c.Meta.Ref)
	if c.Meta.Agenteval != "" {
		fmt.Fprintf(&b, "agenteval: %s. ", c.Meta.Agenteval)
	}
	fmt.Fprintf(&b, "Both tools ran each test alone against `agenteval fakellm` (fixed agent reply, passing judge). ")
	fmt.Fprintf(&b, "Files: `examples/%s`.\n\n", c.Meta.Files)
	b.WriteString("| | tests |\n|---|---:|\n")
	fmt.Fprintf(&b, "| eval files | %d |\n", c.Files)
	fmt.Fprintf(&b, "| tests listed by either tool | %d |\n", n.Listed)
	fmt.Fprintf(&b, "| tests both ran | %d |\n", n.Both)
	fmt.Fprintf(&b, "| only AgentV ran | %d |\n", n.OnlyAgentV)
	fmt.Fprintf(&b, "| only agenteval ran | %d |\n", n.OnlyAgenteval)
	fmt.Fprintf(&b, "| same score (within %g) | %d of %d |\n", scoreTolerance, n.ScoreAgree, n.Both)
	fmt.Fprintf(&b, "| same agent requests | %d of %d |\n", n.AgentAgree, n.Both)
	fmt.Fprintf(&b, "| same judge inputs | %d of %d |\n", n.JudgeAgree, n.Both)
	fmt.Fprintf(&b, "| all three the same | %d of %d |\n\n", n.AllAgree, n.Both)

	titles := []struct{ aspect, title, intro string }{
		{aspectRan, "Tests only one tool ran", "A test one tool listed (running its file whole) that the other did not run, or ran without a result."},
		{aspectScore, "Scores", "Tests both ran whose scores differ, by the grader that differs (a test may count under several)."},
		{aspectAgent, "Agent requests", "Tests whose agent requests differ: the messages (role and text, in order), the tools offered, the number of calls."},
		{aspectJudge, "Judge inputs", "Tests whose judged material (question, reply, reference, criteria, rubric items) reaches one tool's judge and not the other's."},
	}
	for _, t := range titles {
		var gs []Group
		total := 0
		for _, g := range c.Groups {
			if g.Aspect == t.aspect {
				gs = append(gs, g)
				total += g.Tests
			}
		}
		fmt.Fprintf(&b, "## %s\n\n", t.title)
		if len(gs) == 0 {
			b.WriteString("No difference.\n\n")
			continue
		}
		fmt.Fprintf(&b, "%s\n\n", t.intro)
		b.WriteString("| tests | cause | reason | example |\n|---:|---|---|---|\n")
		for _, g := range gs {
			ex := "`" + g.Example + "`"
			if g.Detail != "" {
				ex += ": " + g.Detail
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", g.Tests, cell(g.Cause), cell(g.Reason), cell(ex))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cell makes text safe in a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}

// reasons explain the causes this comparison knows, by a prefix of the
// cause; the first that matches wins, so specific ones come first. A cause
// none explains is reported as such, to be looked into.
var reasons = []struct{ aspect, prefix, reason string }{
	// Tests one tool did not run.
	{aspectRan, "only AgentV ran it: PATH:N:N: the cli target's command puts {OUTPUT_FILE} into the script of bash -c",
		"agenteval checks every target of the example's .agentv/targets.yaml and refuses this one's shell quoting even though --target replaces it; AgentV only resolves the targets a run uses"},
	{aspectRan, "only AgentV has a test of this id", "the tools name the tests a file expands to (scenarios:, a matrix of prompts and vars) differently, so the same test has another id in each; the other tool's run of this id finds none"},
	{aspectRan, "only agenteval has a test of this id", "the tools name the tests a file expands to (scenarios:, a matrix of prompts and vars) differently, so the same test has another id in each; the other tool's run of this id finds none"},
	{aspectRan, "only agenteval ran it: Error: Skipping test '…': Grader '…' in '…': prompt command file not found", "AgentV skips a test whose grader names a file that is not there; agenteval runs the test"},
	{aspectRan, "only agenteval ran it: Error: Skipping test '…': Missing required fields", "AgentV head rejects its own example: the test lacks a field its schema now requires; agenteval runs it"},
	{aspectRan, "only agenteval ran it: Error: Skipping test '…': Assertion field '…' has been removed", "AgentV head rejects its own example, written with an assertion field it has since removed; agenteval runs it"},
	{aspectRan, "only agenteval ran it: Error: Experiment repeat must be a positive integer", "AgentV head rejects its own example's repeat: object, a form it has removed; agenteval runs it"},
	{aspectRan, "only agenteval ran it: Error: Skipping test", "AgentV skips the test, for the reason in the cause; agenteval runs it"},
	{aspectRan, "only AgentV ran it", "agenteval did not run the test: the cause is its message"},
	{aspectRan, "only agenteval ran it", "AgentV did not run the test: the cause is its message"},
	{aspectRan, "neither tool", "both tools failed on the test, each with the message shown"},

	// Scores.
	{aspectScore, "agenteval skips the test: skipped: workspace", "agenteval does not build coding-agent workspaces (templates, hooks, repositories) and skips the test, saying so; AgentV builds the workspace and runs it"},
	{aspectScore, "agenteval skips the test: skipped: a code grader with target:", "AgentV lets such a code grader call an LLM through a target proxy; agenteval has no such proxy and skips the test, saying so"},
	{aspectScore, "agenteval skips the test: skipped: custom assertion type", "a custom assertion type is a TypeScript plugin that AgentV loads into its own process; agenteval cannot, and skips the test, saying so"},
	{aspectScore, "agenteval skips the test", "agenteval skips the test and says why (the cause); AgentV runs it"},
	{aspectScore, "AgentV skips the test", "AgentV skips the test (the cause); agenteval runs it"},
	{aspectScore, "agenteval: execution error: script uv cannot run", "uv is not installed here, for either tool: AgentV scores a code grader whose program cannot start 0 and goes on grading, agenteval ends the test in an execution error"},
	{aspectScore, "agenteval: execution error: script", "a code grader failed: AgentV scores it 0 and goes on grading, agenteval ends the test in an execution error"},
	{aspectScore, "AgentV: execution error: Cannot resolve ref", "AgentV checks the workspace's repository out at a pinned commit, which needs a clone it cannot make offline; agenteval does not build workspaces"},
	{aspectScore, "AgentV: execution error: Docker workspace", "AgentV runs the test in a Docker workspace and there is no Docker here; agenteval does not build workspaces"},
	{aspectScore, "AgentV: execution error: before_", "AgentV runs the workspace's setup hook, which fails here (a package it needs is not installed, or not on the registry); agenteval does not run workspace hooks"},
	{aspectScore, "AgentV: execution error", "AgentV ended the test in an execution error (the cause), agenteval did not"},
	{aspectScore, "agenteval: execution error", "agenteval ended the test in an execution error (the cause), AgentV did not"},
	{aspectScore, "grader script (agenteval script) scores differently", "S5: the payload on a code grader's stdin differs (AgentV's contract script checks its fields: trace, input_files and others)"},
	{aspectScore, "grader code-grader (agenteval script) scores differently", "S5: the payload on a code grader's stdin differs (AgentV's contract script checks its fields: trace, input_files and others)"},
	{aspectScore, "AgentV: execution error: Transform failed", "AgentV's file transform expects an .xlsx file from the target, which the fake does not make; agenteval runs no transform"},
	{aspectScore, "agenteval: execution error: custom-prompt-eval: prompt_command", "the grader's prompt command names a file that is not there (the example is stale): agenteval ends the test in an execution error, AgentV head leaves the grader out of its results"},
	{aspectScore, "agenteval: execution error: strict-eval: prompt_command", "the grader's prompt command names a file that is not there (the example is stale): agenteval ends the test in an execution error, AgentV head leaves the grader out of its results"},
	{aspectScore, "grader llm_grader only in agenteval's results", "AgentV's results hold fewer LLM graders than the test names (AgentV head reports its metric: llm-rubric graders under one llm-rubric score); agenteval scores each"},
	{aspectScore, "the graders agree but", "the tools combine the graders' scores differently (weights, required graders, whether the criteria's own judge counts)"},

	// Agent requests.
	{aspectAgent, "agenteval skips the test", "see Scores: agenteval skips the test, so nothing reaches its agent"},
	{aspectAgent, "AgentV skips the test", "see Scores: AgentV skips the test, so nothing reaches its agent"},
	{aspectAgent, "AgentV ends the test in an execution error", "see Scores: AgentV's run of the test ended early"},
	{aspectAgent, "agenteval ends the test in an execution error", "see Scores: agenteval's run of the test ended early"},
	{aspectAgent, "a user message's {{ template }} is expanded by AgentV only", "S7: AgentV head evaluates Nunjucks in a test's own input (its red-team example means the text literally); agenteval sends the input as written"},
	{aspectAgent, "a system message only AgentV sends", "S1: AgentV's LLM targets add a default system prompt to a test that has none; agenteval adds none"},
	{aspectAgent, "the system message differs", "S9: where the test's system message is an unset ${{ VAR }}, AgentV drops it (and adds its default system prompt); agenteval sends an empty system message"},
	{aspectAgent, "a user message's text differs in leading or trailing white space", "AgentV trims each input message; agenteval keeps the final line break of a YAML block (|)"},
	{aspectAgent, "a user message's text differs in white space inside it", "AgentV joins a message's text and file parts with one line break, agenteval with a blank line"},
	{aspectAgent, "a user message's JSON has its keys in another order", "AgentV writes an object given as input in the file's key order; agenteval sorts the keys"},
	{aspectAgent, "a user message has a file part only agenteval sends", "AgentV leaves out a file part whose path climbs out of the dataset's folder (../); agenteval attaches the file"},
	{aspectAgent, "agenteval calls the agent more often", "S6: with pass_at_k trials AgentV stops at the first passing trial, agenteval runs them all"},

	// Judge inputs.
	{aspectJudge, "agenteval skips the test", "see Scores: agenteval skips the test, so nothing reaches its judge"},
	{aspectJudge, "AgentV skips the test", "see Scores: AgentV skips the test, so nothing reaches its judge"},
	{aspectJudge, "AgentV ends the test in an execution error", "see Scores: AgentV's run of the test ended before grading"},
	{aspectJudge, "agenteval ends the test in an execution error", "see Scores: agenteval's run of the test ended before grading"},
	{aspectJudge, "agenteval's judge sees text of its own in the criterion: \"{{", "S7: AgentV 5 expands a Nunjucks expression in a criterion ({{ env.VAR | default(...) }}); agenteval sends it as written"},
	{aspectJudge, "agenteval's judge sees text of its own in the criterion: \"The reply agrees in substance", "S3: for criteria plus expected_output without assertions, agenteval adds its own strict criterion (same facts, recommendations and decisions); AgentV's judge compares the reply with the reference as a whole"},
	{aspectJudge, "agenteval's judge sees text of its own in the criterion: \"Contradiction guard", "agenteval words a rubric item's operator itself, in the criterion (what must be stated, what contradicts it); AgentV gives its own operator guidance"},
	{aspectJudge, "agenteval's judge sees the criterion with words of its own added", "agenteval words a rubric item's operator itself, in the criterion (what must be stated, what contradicts it); AgentV gives its own operator guidance"},
	{aspectJudge, "agenteval's judge sees text of its own in the criterion: \"Score bands:", "agenteval writes a rubric item's score ranges into the criterion in its own words; AgentV lists them under the item"},
	{aspectJudge, "AgentV's judge sees text of its own in the reference_answer", "AgentV shows a reference made of file parts as JSON (type, path, the text with its quotes escaped); agenteval shows the files' text"},
	{aspectJudge, "AgentV's judge sees all of the answer, agenteval's does not", "agenteval's llm_grader sends a prompt file without {{ output }} as it is, so its judge never sees the reply; AgentV 4.42.4 takes prompt: NAME.md as text and puts it in its default prompt, which holds the answer"},
	{aspectJudge, "agenteval's judge sees all of the criteria, AgentV's does not", "for an llm-grader with a prompt:, AgentV 4.42.4 puts the prompt's text where the test's criteria go, so the criteria never reach that judge; agenteval's judge gets both"},
	{aspectJudge, "agenteval's judge sees all of the var ", "a grader prompt file's text reaches agenteval's judge; AgentV 4.42.4 reads prompt: without file:// as text, so its judge gets the file's name instead"},
	{aspectJudge, "agenteval's judge sees part of the prompt, AgentV's does not", "AgentV 4.42.4 reads a prompt: without file:// as text, so its judge gets the file's name; agenteval reads the file"},
	{aspectJudge, "agenteval's judge sees part of the input/user, AgentV's does not", "follows from the agent requests: AgentV leaves out a file part whose path climbs out of the dataset's folder; agenteval attaches it"},
	{aspectJudge, "agenteval's judge sees part of the conversation/user, AgentV's does not", "follows from the agent requests: AgentV leaves out a file part whose path climbs out of the dataset's folder; agenteval attaches it"},
	{aspectJudge, "agenteval's judge sees part of the expected_output, AgentV's does not", "AgentV's judge gets the reference in part or not at all (4.42.4 shows file parts as JSON, the text escaped; AgentV 5 none); agenteval fills {{ expected_output }} with the files' text"},
	{aspectJudge, "AgentV's judge sees a file's name as the", "AgentV 4.42.4 reads an llm-grader's prompt: NAME.md (without file://) as text and puts it where the criteria or prompt go; agenteval reads the file"},
	{aspectJudge, "AgentV's judge sees all of the criteria, agenteval's does not", "AgentV puts the test's criteria into every LLM grader's prompt, also one that grades its own rubric items or prompt; agenteval's judge gets only what it grades"},
	{aspectJudge, "AgentV's judge sees all of the question, agenteval's does not", "AgentV puts the test's input into every LLM grader's prompt; agenteval's rubric and llm_grader judges get the reply without the input"},
	{aspectJudge, "AgentV's judge sees all of the reference_answer, agenteval's does not", "AgentV puts the test's expected_output into every LLM grader's prompt; agenteval's judge gets it only where it is graded (the reference criterion, an llm_grader prompt that asks for it)"},
	{aspectJudge, "agenteval's judge sees all of the reference, AgentV's does not", "AgentV's prompt for this grader carries no reference answer (AgentV 5's llm-rubric has none); agenteval's judge gets the test's expected_output"},
	{aspectJudge, "agenteval's judge sees part of the reference, AgentV's does not", "AgentV's judge gets the reference in part or not at all (4.42.4 shows file parts as JSON, the text escaped; AgentV 5's llm-rubric carries none); agenteval's judge gets the test's expected_output"},
	{aspectJudge, "agenteval's judge sees all of the expected_output, AgentV's does not", "the grader's prompt asks for {{ expected_output }}: agenteval fills it, AgentV 5's judge gets no reference"},
	{aspectJudge, "agenteval's judge sees all of the prompt, AgentV's does not", "AgentV 4.42.4 reads an llm_grader's prompt: as its text unless it starts with file://, so its judge gets the file's name; agenteval reads the file"},
	{aspectJudge, "AgentV's judge sees all of the prompt, agenteval's does not", "AgentV 4.42.4 reads a prompt: without file:// as text (here a file's name, which its judge gets); agenteval reads the file it names"},
}

// reasonFor is the known reason for a cause, or a note that none is known.
func reasonFor(aspect, cause string) string {
	for _, r := range reasons {
		if r.aspect == aspect && strings.HasPrefix(cause, r.prefix) {
			return r.reason
		}
	}
	return "not yet explained: see the example"
}
