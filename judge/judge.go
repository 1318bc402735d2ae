package judge

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/cache"
	"github.com/agenteval/agenteval/internal/schemacheck"
	"github.com/agenteval/agenteval/internal/strictjson"
)

// Judge makes structured calls to a model. The zero values of its settings
// are the defaults: temperature 0, one sample, two repairs. To cache its
// calls, give it a model wrapped by cache.Wrap.
type Judge struct {
	Model agenteval.Model
	// Name identifies the model in cache keys and results, such as
	// "openai:gpt-4o-mini".
	Name string
	// Temperature is used for single-sample calls; default 0.
	Temperature float64
	// Samples is how many times each decision is asked, for a majority vote;
	// 0 or 1 means once. It should be odd.
	Samples int
	// VoteTemperature is used when Samples > 1, so that the samples can
	// differ; default 0.7.
	VoteTemperature float64
	// MaxRepairs is how many times invalid output is sent back with the
	// error; 0 means the default of 2, a negative number none.
	MaxRepairs int
}

// InvalidOutputError is returned when the judge's reply still does not fit
// the schema after the repairs.
type InvalidOutputError struct {
	Judge    string
	Attempts int
	Err      error
	Output   string
}

func (e *InvalidOutputError) Error() string {
	return fmt.Sprintf("judge %s gave invalid output %d times (%v); last output: %q", e.Judge, e.Attempts, e.Err, truncate(e.Output, 200))
}

func (j *Judge) maxRepairs() int {
	switch {
	case j.MaxRepairs < 0:
		return 0
	case j.MaxRepairs == 0:
		return 2
	}
	return j.MaxRepairs
}

var compiled sync.Map // schema JSON -> *schemacheck.Schema

func compileSchema(schemaJSON []byte) (*schemacheck.Schema, error) {
	if s, ok := compiled.Load(string(schemaJSON)); ok {
		return s.(*schemacheck.Schema), nil
	}
	s, err := schemacheck.Compile(schemaJSON)
	if err != nil {
		return nil, err
	}
	compiled.Store(string(schemaJSON), s)
	return s, nil
}

// parseReply reads a reply as a JSON object, tolerating a Markdown code
// fence around it, and validates it against the schema.
func parseReply(content string, sch *schemacheck.Schema) (map[string]any, error) {
	text := strings.TrimSpace(content)
	if strings.HasPrefix(text, "```") {
		text = strings.TrimPrefix(text, "```json")
		text = strings.TrimPrefix(text, "```")
		text = strings.TrimSuffix(strings.TrimSpace(text), "```")
	}
	var v any
	if err := strictjson.Decode([]byte(text), &v); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if err := sch.Validate([]byte(text)); err != nil {
		return nil, fmt.Errorf("does not match the schema: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a JSON object")
	}
	return m, nil
}

// Ask makes one structured call at the judge's temperature and returns the
// decoded, validated reply. A provider failure is returned as is (it was
// already retried), and what it spent is in the usage; output that does not fit the schema is sent back with
// the problem, at most MaxRepairs times, and then reported as an
// *InvalidOutputError.
func (j *Judge) Ask(ctx context.Context, p Prompt, schemaName string, schema map[string]any) (map[string]any, agenteval.Usage, error) {
	return j.ask(ctx, p, schemaName, schema, 0, j.Temperature)
}

// ask is Ask for one sample of a vote; the samples after the first are
// cache variants, so the samples of a vote are cached apart.
func (j *Judge) ask(ctx context.Context, p Prompt, schemaName string, schema map[string]any, sample int, temp float64) (map[string]any, agenteval.Usage, error) {
	schemaJSON, err := json.Marshal(schema)
	if err != nil {
		return nil, agenteval.Usage{}, fmt.Errorf("judge schema: %w", err)
	}
	return j.askEncoded(ctx, p, schemaName, schema, schemaJSON, sample, temp)
}

// askEncoded is ask with the schema already encoded.
func (j *Judge) askEncoded(ctx context.Context, p Prompt, schemaName string, schema map[string]any, schemaJSON []byte, sample int, temp float64) (map[string]any, agenteval.Usage, error) {
	var usage agenteval.Usage
	sch, err := compileSchema(schemaJSON)
	if err != nil {
		return nil, usage, fmt.Errorf("judge schema: %w", err)
	}
	if sample > 0 {
		ctx = cache.WithVariant(ctx, "judge sample "+strconv.Itoa(sample))
	}
	// The nonce changes every call; the cache keys the prompt without it,
	// so a rerun on the same material is answered from the cache.
	ctx = cache.WithNonce(ctx, p.Nonce)
	ctx = cache.WithCheck(ctx, func(r *agenteval.ModelResponse) bool {
		_, err := parseReply(r.Message.Content, sch)
		return err == nil
	})
	req := &agenteval.ModelRequest{
		Messages: agenteval.Conversation{
			{Role: agenteval.RoleSystem, Content: p.System},
			{Role: agenteval.RoleUser, Content: p.User},
		},
		Temperature: &temp,
		// The schema keeps its ordered properties; every SDK marshals it with
		// encoding/json, which honours Object's order.
		Schema: &agenteval.OutputSchema{Name: schemaName, Schema: schema, JSON: schemaJSON},
	}
	attempts := 1 + j.maxRepairs()
	var last error
	var lastOut string
	for a := 1; a <= attempts; a++ {
		resp, err := j.Model.Generate(ctx, req)
		if err != nil {
			// A call that failed after its retries still spent them.
			usage.Add(agenteval.UsageOf(err))
			if strings.HasPrefix(err.Error(), j.Name+":") {
				// A provider's error already names the model.
				return nil, usage, fmt.Errorf("judge: %w", err)
			}
			return nil, usage, fmt.Errorf("judge %s: %w", j.Name, err)
		}
		usage.Add(&resp.Usage)
		v, perr := parseReply(resp.Message.Content, sch)
		if perr == nil {
			return v, usage, nil
		}
		last, lastOut = perr, resp.Message.Content
		req.Messages = append(req.Messages,
			agenteval.Message{Role: agenteval.RoleAssistant, Content: resp.Message.Content},
			agenteval.Message{Role: agenteval.RoleUser, Content: repairPrompt(perr, schemaJSON)},
		)
	}
	return nil, usage, &InvalidOutputError{Judge: j.Name, Attempts: attempts, Err: last, Output: lastOut}
}

// criteriaSchemas caches encoded criteria schemas: the same assertions are
// judged turn after turn, conversation after conversation.
var (
	criteriaSchemas sync.Map // criteria texts -> schemaEntry
	schemaCount     atomic.Int64
)

type schemaEntry struct {
	schema map[string]any
	json   []byte
}

func criteriaSchemaCached(criteria []Criterion) (map[string]any, []byte, error) {
	var b strings.Builder
	for _, c := range criteria {
		b.WriteString(c.Text)
		b.WriteByte(0)
	}
	k := b.String()
	if e, ok := criteriaSchemas.Load(k); ok {
		se := e.(schemaEntry)
		return se.schema, se.json, nil
	}
	schema := criteriaSchema(criteria)
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, nil, fmt.Errorf("judge schema: %w", err)
	}
	// Bounded, so a run with endless distinct criteria does not grow it.
	if schemaCount.Add(1) <= 4096 {
		criteriaSchemas.Store(k, schemaEntry{schema, raw})
	}
	return schema, raw, nil
}

// Decision is the verdict on one criterion.
type Decision struct {
	Criterion Criterion
	Passed    bool
	Reason    string
	// Votes is "k/n" when several samples voted.
	Votes string
	// PassVotes of Samples samples voted pass; Samples counts those that
	// answered, 1 without a vote (see VotesOf).
	PassVotes, Samples int
}

// Evidence is the judge's reason, with the vote when several samples
// voted: what a result shows under the criterion.
func (d Decision) Evidence() string {
	if d.Votes == "" {
		return d.Reason
	}
	return d.Reason + " (votes " + d.Votes + ")"
}

// KeyedCriterion is a criterion as a prompt lists it: under the key its
// verdict must use.
type KeyedCriterion struct {
	Key  string
	Text string
}

// Decide renders the named prompt with data plus Criteria (the criteria
// under their keys), asks the judge about all of them in one call per
// sample, and returns a decision per criterion, by majority when Samples >
// 1. Samples that fail are left out of the vote as long as one succeeds.
func (j *Judge) Decide(ctx context.Context, promptName string, data map[string]any, criteria []Criterion) ([]Decision, agenteval.Usage, error) {
	keyed := make([]KeyedCriterion, len(criteria))
	for i, c := range criteria {
		keyed[i] = KeyedCriterion{Key: key(i), Text: c.Text}
	}
	vars := make(map[string]any, len(data)+1)
	for k, v := range data {
		vars[k] = v
	}
	vars["Criteria"] = keyed
	p, err := Render(promptName, vars)
	if err != nil {
		return nil, agenteval.Usage{}, err
	}
	n := max(j.Samples, 1)
	schema, schemaJSON, err := criteriaSchemaCached(criteria)
	if err != nil {
		return nil, agenteval.Usage{}, err
	}
	temp := j.Temperature
	if n > 1 {
		temp = j.VoteTemperature
		if temp == 0 {
			temp = 0.7
		}
	}
	type sampleResult struct {
		v     map[string]any
		usage agenteval.Usage
		err   error
	}
	results := make([]sampleResult, n)
	var wg sync.WaitGroup
	for s := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, u, err := j.askEncoded(ctx, p, "criteria_verdicts", schema, schemaJSON, s, temp)
			results[s] = sampleResult{v, u, err}
		}()
	}
	wg.Wait()
	var usage agenteval.Usage
	var ok []map[string]any
	var firstErr error
	for _, r := range results {
		usage.Add(&r.usage)
		if r.err != nil {
			if firstErr == nil {
				firstErr = r.err
			}
			continue
		}
		ok = append(ok, r.v)
	}
	if len(ok) == 0 {
		return nil, usage, firstErr
	}
	out := make([]Decision, len(criteria))
	for i, c := range criteria {
		yes := 0
		var yesReason, noReason string
		for _, v := range ok {
			item, _ := v[key(i)].(map[string]any)
			passed, _ := item["passed"].(bool)
			reason, _ := item["reason"].(string)
			if passed {
				yes++
				if yesReason == "" {
					yesReason = reason
				}
			} else if noReason == "" {
				noReason = reason
			}
		}
		d := Decision{Criterion: c, Passed: yes*2 > len(ok), PassVotes: yes, Samples: len(ok)}
		d.Reason = noReason
		if d.Passed {
			d.Reason = yesReason
		}
		if len(ok) > 1 || n > 1 {
			d.Votes = fmt.Sprintf("%d/%d", yes, len(ok))
			if len(ok) < n {
				d.Votes += fmt.Sprintf(" (%d of %d samples failed)", n-len(ok), n)
			}
		}
		out[i] = d
	}
	return out, usage, nil
}
