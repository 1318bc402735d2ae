package grade

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/judge"
)

// The judge-based graders. Each makes as few judge calls as the metric
// allows: one for rubrics and each conversation grader, two for goal
// accuracy and topic adherence (Ragas makes one per topic and more).

// The judge-based graders.
var (
	Rubrics = judged(Definition{Name: "rubrics",
		Doc: "LLM-judged criteria: the sample's rubrics map, plus criteria=[...] (or --criterion); score = weighted share passed"}, newRubrics)
	AgentGoalAccuracy = judged(Definition{Name: "agent_goal_accuracy", Aliases: []string{"goal_accuracy"},
		Doc: "Ragas AgentGoalAccuracy: 1 when the end state achieves the reference (or, without one, the inferred user goal)"}, goalGrader(goalAuto))
	AgentGoalAccuracyWithReference = judged(Definition{Name: "agent_goal_accuracy_with_reference",
		Doc: "agent_goal_accuracy that requires reference"}, goalGrader(goalWithReference))
	AgentGoalAccuracyWithoutReference = judged(Definition{Name: "agent_goal_accuracy_without_reference",
		Doc: "agent_goal_accuracy against the inferred goal, ignoring reference"}, goalGrader(goalWithoutReference))
	TopicAdherence = judged(Definition{Name: "topic_adherence",
		Doc: "Ragas TopicAdherenceScore against reference_topics (mode: precision|recall|f1, default f1)"}, newTopicAdherence)
	InstructionRetention = conversationGrader("instruction_retention", "every reply keeps to the persistent instructions the user gave earlier",
		"Every assistant reply keeps to every persistent instruction the user gave before it, until the user lifted it.")
	InferenceMemory = conversationGrader("inference_memory", "replies use relevant facts the user stated earlier, unprompted",
		"Every assistant reply takes into account the earlier facts about the user that matter to it.")
	SelfCoherence = conversationGrader("self_coherence", "no unacknowledged self-contradiction and no giving in to incorrect pushback",
		"The assistant stays consistent with its earlier statements and tool results, and does not abandon a correct answer under unfounded pressure.")
	VersionedEditing = conversationGrader("versioned_editing", "requested revisions are applied exactly, to the right version",
		"Every revision the user requested is applied exactly, to the version the user meant, with nothing else changed or lost.")
	ConversationRelevance = judged(Definition{Name: "conversation_relevance",
		Doc: "share of assistant replies relevant to the last window_size turns (default 5)"}, newRelevance)
)

// JudgeOptions is the options of a judged grader whose only setting is
// how many times the judge votes.
type JudgeOptions struct {
	Samples int `json:"samples" doc:"judge votes per decision, an odd number (default 1)"`
}

// judgeFor applies a grader's samples setting to a copy of the judge.
func judgeFor(j *judge.Judge, samples int) (*judge.Judge, error) {
	if samples == 0 {
		return j, nil
	}
	if samples < 0 || samples%2 == 0 {
		return nil, fmt.Errorf("samples must be a positive odd number, for a clear majority; got %d", samples)
	}
	if j == nil {
		return nil, nil // checking options only
	}
	jj := *j
	jj.Samples = samples
	return &jj, nil
}

// judgedText is what a judge sees: the transcript, and the graded reply when
// only part of the transcript is graded (one turn of a live conversation).
// The judge's prompts quote both, message by message.
func judgedText(in *agenteval.GradeInput) (transcript, output agenteval.Conversation) {
	transcript = in.Transcript
	if in.Turn > 0 && len(in.Output) > 0 {
		output = in.Output
	}
	return transcript, output
}

var scaleKey = regexp.MustCompile(`^score(\d+)_description$`)

// scaleLevels recognises Ragas's RubricsScore form, {"score1_description":
// ..., "score5_description": ...}, and returns its levels in order.
func scaleLevels(rubrics map[string]string) ([]judge.KeyedCriterion, []int, bool) {
	if len(rubrics) < 2 {
		return nil, nil, false
	}
	var levels []int
	for k := range rubrics {
		m := scaleKey.FindStringSubmatch(k)
		if m == nil {
			return nil, nil, false
		}
		n, _ := strconv.Atoi(m[1])
		levels = append(levels, n)
	}
	sort.Ints(levels)
	out := make([]judge.KeyedCriterion, len(levels))
	for i, n := range levels {
		out[i] = judge.KeyedCriterion{Key: strconv.Itoa(n), Text: rubrics[fmt.Sprintf("score%d_description", n)]}
	}
	return out, levels, true
}

// gradeScale places the conversation on a Ragas-style 1..N scale and
// normalises the level to [0,1].
func gradeScale(ctx context.Context, j *judge.Judge, in *agenteval.GradeInput, levels []judge.KeyedCriterion, nums []int) (Outcome, error) {
	keys := make([]string, len(levels))
	for i, l := range levels {
		keys[i] = l.Key
	}
	schema := judge.ObjectSchema(
		judge.Field{Key: "reason", Value: judge.String("Why this level fits, citing the conversation")},
		judge.Field{Key: "level", Value: judge.Enum("the level that fits best", keys...)},
	)
	transcript, _ := judgedText(in)
	p, err := judge.Render("rubric_scale", map[string]any{"Transcript": transcript, "Reference": in.Reference, "Levels": levels})
	if err != nil {
		return Outcome{}, err
	}
	v, usage, err := j.Ask(ctx, p, "rubric_level", schema)
	o := Outcome{Usage: &usage}
	if err != nil {
		return o, err
	}
	level, _ := strconv.Atoi(fmt.Sprint(v["level"]))
	lo, hi := nums[0], nums[len(nums)-1]
	o.Score = float64(level-lo) / float64(hi-lo)
	reason, _ := v["reason"].(string)
	o.Reason = fmt.Sprintf("level %d of %d..%d", level, lo, hi)
	o.Assertions = []agenteval.Assertion{{Text: fmt.Sprintf("rubric level (score%d_description)", level), Passed: level == hi, Evidence: reason}}
	o.Details = map[string]any{"level": level}
	return o, nil
}

type goalMode int

const (
	goalAuto goalMode = iota
	goalWithReference
	goalWithoutReference
)

func goalGrader(mode goalMode) func(JudgeOptions, Env) (Func, error) {
	return func(o JudgeOptions, env Env) (Func, error) {
		j, err := judgeFor(env.Judge, o.Samples)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
			return gradeGoal(ctx, j, in, mode)
		}, nil
	}
}

// gradeGoal is Ragas's two-stage goal accuracy: infer the user's goal and
// the end state, then decide whether the end state achieves the desired
// outcome (the reference when there is one and the mode allows it).
func gradeGoal(ctx context.Context, j *judge.Judge, in *agenteval.GradeInput, mode goalMode) (Outcome, error) {
	if mode == goalWithReference && strings.TrimSpace(in.Reference) == "" {
		return Outcome{}, &agenteval.MissingFieldError{Grader: "agent_goal_accuracy_with_reference", Field: "reference"}
	}
	transcript, _ := judgedText(in)
	p, err := judge.Render("goal_infer", map[string]any{"Transcript": transcript})
	if err != nil {
		return Outcome{}, err
	}
	schema := judge.ObjectSchema(
		judge.Field{Key: "user_goal", Value: judge.String("what the user wanted, with its specifics")},
		judge.Field{Key: "end_state", Value: judge.String("what is true at the end, per the tool results and replies")},
	)
	v, usage, err := j.Ask(ctx, p, "goal_and_end_state", schema)
	o := Outcome{Usage: &usage}
	if err != nil {
		return o, fmt.Errorf("infer the goal: %w", err)
	}
	goal, _ := v["user_goal"].(string)
	end, _ := v["end_state"].(string)
	desired, source := goal, "the user's goal, inferred from the conversation"
	if mode != goalWithoutReference && strings.TrimSpace(in.Reference) != "" {
		desired, source = in.Reference, "the reference"
	}
	crit := []judge.Criterion{{ID: "goal_achieved", Text: "The end state achieves the desired outcome."}}
	ds, u2, err := j.Decide(ctx, "goal_compare", map[string]any{"Desired": desired, "Source": source, "EndState": end}, crit)
	usage.Add(&u2)
	o.Details = map[string]any{"user_goal": goal, "end_state": end, "desired_outcome": desired, "compared_with": strings.TrimPrefix(source, "the ")}
	if err != nil {
		return o, fmt.Errorf("compare with the end state: %w", err)
	}
	d := ds[0]
	if d.Passed {
		o.Score = 1
	}
	o.Reason = d.Reason
	o.Assertions = []agenteval.Assertion{
		{Text: "the end state achieves " + source + ": " + truncate(desired, 160), Passed: d.Passed, Evidence: d.Evidence() + " [end state: " + truncate(end, 300) + "]"},
	}
	return o, nil
}

// TopicAdherenceOptions is the options of topic_adherence.
type TopicAdherenceOptions struct {
	Mode string `json:"mode" enum:"precision,recall,f1" doc:"which measure is the score (default f1)"`
}

func newTopicAdherence(o TopicAdherenceOptions, env Env) (Func, error) {
	mode := o.Mode
	switch mode {
	case "":
		mode = "f1"
	case "precision", "recall", "f1":
	default:
		return nil, fmt.Errorf("mode %q is not one of precision, recall, f1", o.Mode)
	}
	return func(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
		return gradeTopics(ctx, env.Judge, in, mode)
	}, nil
}

// gradeTopics is Ragas's TopicAdherenceScore in two calls: extract the
// user's topics, then assess each one (answered or refused; inside the
// reference topics or not). A list of the wrong length is padded with
// "answered, off-reference" or truncated, never a crash.
func gradeTopics(ctx context.Context, j *judge.Judge, in *agenteval.GradeInput, mode string) (Outcome, error) {
	if in.ReferenceTopics == nil {
		return Outcome{}, &agenteval.MissingFieldError{Grader: "topic_adherence", Field: "reference_topics"}
	}
	transcript, _ := judgedText(in)
	p, err := judge.Render("topics_extract", map[string]any{"Transcript": transcript})
	if err != nil {
		return Outcome{}, err
	}
	v, usage, err := j.Ask(ctx, p, "user_topics", judge.ObjectSchema(
		judge.Field{Key: "topics", Value: judge.ArrayOf(judge.String("a topic, two to six words"), "the user's topics")},
	))
	o := Outcome{Usage: &usage}
	if err != nil {
		return o, fmt.Errorf("extract topics: %w", err)
	}
	var topics []string
	if list, ok := v["topics"].([]any); ok {
		for _, t := range list {
			if s, ok := t.(string); ok && strings.TrimSpace(s) != "" {
				topics = append(topics, s)
			}
		}
	}
	type assessment struct {
		topic, reason     string
		refused, inRef    bool
		padded, truncated bool
	}
	var as []assessment
	note := ""
	if len(topics) > 0 {
		p, err := judge.Render("topics_assess", map[string]any{"Transcript": transcript, "Topics": topics, "ReferenceTopics": in.ReferenceTopics})
		if err != nil {
			return o, err
		}
		item := judge.ObjectSchema(
			judge.Field{Key: "topic", Value: judge.String("the topic, as given")},
			judge.Field{Key: "reason", Value: judge.String("what the assistant did with it, and how it relates to the reference topics")},
			judge.Field{Key: "refused", Value: judge.Boolean("true when the assistant declined or did not engage")},
			judge.Field{Key: "in_reference", Value: judge.Boolean("true when the topic is within the reference topics")},
		)
		v, u2, err := j.Ask(ctx, p, "topic_assessments", judge.ObjectSchema(judge.Field{Key: "assessments", Value: judge.ArrayOf(item, "one per topic, in order")}))
		usage.Add(&u2)
		if err != nil {
			return o, fmt.Errorf("assess topics: %w", err)
		}
		list, _ := v["assessments"].([]any)
		for i, t := range topics {
			a := assessment{topic: t}
			if i < len(list) {
				m, _ := list[i].(map[string]any)
				a.reason, _ = m["reason"].(string)
				a.refused, _ = m["refused"].(bool)
				a.inRef, _ = m["in_reference"].(bool)
			} else {
				a.padded = true
				a.reason = "no assessment returned; counted as answered and off-reference"
			}
			as = append(as, a)
		}
		if len(list) > len(topics) {
			note = fmt.Sprintf("; %d extra assessments ignored", len(list)-len(topics))
		} else if len(list) < len(topics) {
			note = fmt.Sprintf("; %d topics lacked an assessment and were padded", len(topics)-len(list))
		}
	}
	const eps = 1e-10
	var tp, fp, fn float64
	for _, a := range as {
		answered := !a.refused
		switch {
		case answered && a.inRef:
			tp++
		case answered && !a.inRef:
			fp++
		case !answered && a.inRef:
			fn++
		}
		text := fmt.Sprintf("topic %q", a.topic)
		state := map[bool]string{true: "answered", false: "refused"}[answered] + ", " + map[bool]string{true: "within", false: "outside"}[a.inRef] + " the reference topics"
		// An assertion passes when the assistant did the right thing:
		// answered an on-topic request or declined an off-topic one.
		o.Assertions = append(o.Assertions, agenteval.Assertion{Text: text, Passed: answered == a.inRef, Evidence: state + ": " + a.reason})
	}
	precision := tp / (tp + fp + eps)
	recall := tp / (tp + fn + eps)
	f1 := 2 * precision * recall / (precision + recall + eps)
	switch mode {
	case "precision":
		o.Score = precision
	case "recall":
		o.Score = recall
	default:
		o.Score = f1
	}
	o.Score = math.Min(1, math.Max(0, o.Score))
	o.Reason = fmt.Sprintf("%s over %d topics: TP=%d FP=%d FN=%d%s", mode, len(as), int(tp), int(fp), int(fn), note)
	if len(topics) == 0 {
		o.Reason = "no topics found in the user's messages; Ragas scores this 0"
	}
	o.Details = map[string]any{"topics": topics, "tp": tp, "fp": fp, "fn": fn, "precision": precision, "recall": recall, "f1": f1}
	return o, nil
}

// conversationGrader defines a MultiChallenge axis: one judge call over
// the numbered transcript with one criterion. The prompt file has the
// grader's name.
func conversationGrader(name, doc, criterion string) *Definition {
	return judged(Definition{Name: name, Doc: doc}, func(o JudgeOptions, env Env) (Func, error) {
		j, err := judgeFor(env.Judge, o.Samples)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
			ds, usage, err := j.Decide(ctx, name, map[string]any{"Transcript": in.Transcript}, []judge.Criterion{{ID: name, Text: criterion}})
			o := Outcome{Usage: &usage}
			if err != nil {
				return o, err
			}
			d := ds[0]
			if d.Passed {
				o.Score = 1
			}
			o.Reason = d.Reason
			o.Assertions = []agenteval.Assertion{{Text: criterion, Passed: d.Passed, Evidence: d.Evidence()}}
			recordVotes(&o, ds)
			return o, nil
		}, nil
	})
}

// RelevanceOptions is the options of conversation_relevance.
type RelevanceOptions struct {
	WindowSize int `json:"window_size" doc:"how many turns each reply must be relevant to (default 5)"`
	Samples    int `json:"samples" doc:"judge votes per decision, an odd number (default 1)"`
}

func newRelevance(cfg RelevanceOptions, env Env) (Func, error) {
	if cfg.WindowSize == 0 {
		cfg.WindowSize = 5
	}
	if cfg.WindowSize < 1 {
		return nil, fmt.Errorf("window_size must be at least 1")
	}
	j, err := judgeFor(env.Judge, cfg.Samples)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
		turns := in.Transcript.Turns()
		var crits []judge.Criterion
		for k, t := range turns {
			if t.LastAssistant() == "" {
				continue
			}
			from := max(1, k+1-cfg.WindowSize+1)
			span := fmt.Sprintf("turns %d to %d", from, k+1)
			if from == k+1 {
				span = fmt.Sprintf("turn %d", k+1)
			}
			crits = append(crits, judge.Criterion{
				ID:   fmt.Sprintf("turn-%d", k+1),
				Text: fmt.Sprintf("The assistant's reply in turn %d is relevant to the user's messages in %s.", k+1, span),
			})
		}
		if len(crits) == 0 {
			return Outcome{}, &agenteval.MissingFieldError{Grader: "conversation_relevance", Field: "an assistant reply with text"}
		}
		ds, usage, err := j.Decide(ctx, "relevance", map[string]any{"Transcript": in.Transcript}, crits)
		o := Outcome{Usage: &usage}
		if err != nil {
			return o, err
		}
		relevant := 0
		for _, d := range ds {
			if d.Passed {
				relevant++
			}
			o.Assertions = append(o.Assertions, agenteval.Assertion{Text: d.Criterion.Text, Passed: d.Passed, Evidence: d.Reason})
		}
		recordVotes(&o, ds)
		o.Score = float64(relevant) / float64(len(ds))
		o.Reason = fmt.Sprintf("%d of %d replies relevant (window of %d turns)", relevant, len(ds), cfg.WindowSize)
		return o, nil
	}, nil
}
