package grade

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/judge"
)

// Definition describes one kind of grader. Each built-in grader is a plain
// exported value (Contains, ToolCalls, Rubrics, ...), and All lists them;
// there is no registry to add to at init time. The list is the caller's:
// Spec.Graders, PlanOptions.Graders (and the suite loader's and runner's
// options, which pass it on) name the definitions a type is looked up in,
// so a program adds a grader of its own by appending it to All.
//
// Define makes a definition from an options struct, as the built-in ones
// are made. A definition written by hand, with only New (or Track) set,
// works too: its settings are checked against Params before New sees
// them.
type Definition struct {
	// Name is the type an eval file's assertion or a --metric flag writes,
	// in snake_case; kebab-case and a not_ prefix are accepted too.
	Name string
	// Aliases are other names for the same grader (AgentV's, older ones).
	Aliases []string
	// Doc is a one-line description, shown by --help and in the JSON
	// Schema for editors.
	Doc string
	// Params describes the grader's own settings, beside the ones every
	// grader takes (Common). Hints for unknown settings and the editor
	// schema are made from it.
	Params []Param
	// NeedsJudge reports whether a grader with these options calls the LLM
	// judge; nil means never. Options that do not decode need no judge
	// (New reports them).
	NeedsJudge func(options any) bool
	// New builds the grader from its options: a map of settings, as an
	// eval file or a --metric flag gives them, or the grader's options
	// struct (Text, ToolCallsOptions, ...) from Go. It rejects bad
	// options with an error that says what to write instead. It is nil
	// for a grader that only tracks (Track builds it then).
	New func(options any, env Env) (Func, error)
	// Track, when set, builds a grader that follows a conversation turn by
	// turn (subgoals): it returns a function that starts one conversation.
	Track func(options any, env Env) (func() Tracking, error)

	// bind decodes options once for all of the above: build uses it, so
	// a spec's options are decoded once. defs are the graders a composite
	// looks its members up in (nil: All). define and tracked set it, and
	// every built-in grader is made by them.
	bind func(options any, defs []*Definition) (bound, error)
	// self is the definition bind was made for. A copy made by hand (a
	// built-in renamed, or given another New) has another address, and is
	// built from its exported fields, which the caller may have changed.
	self *Definition
}

// bound is a grader's options, decoded: whether they call the judge, and
// how to make the grader from them.
type bound struct {
	needsJudge bool
	// make builds the grader's function and, for a grader that follows a
	// conversation, what starts one (nil for the others).
	make func(Env) (Func, func() Tracking, error)
}

// Param is one setting of a grader.
type Param struct {
	Name string
	// Types are the JSON types the setting takes ("string", "number",
	// "integer", "boolean", "array", "object"); none means any value.
	Types []string
	// Enum, when set, lists the values allowed.
	Enum []string
	// Aliases are other names for the setting (AgentV's).
	Aliases []string
	Doc     string
}

// Common are the settings every grader takes, whatever its kind.
var Common = []Param{
	{Name: "type", Types: []string{"string"}, Doc: "the grader: one of the names agenteval score --help lists; a not_ prefix negates"},
	{Name: "name", Types: []string{"string"}, Doc: "the score's name in results; defaults to the type"},
	{Name: "weight", Types: []string{"number"}, Doc: "weight in the unit's weighted mean (default 1; 0 records without counting)"},
	{Name: "required", Types: []string{"boolean"}, Doc: "a failure of this grader fails the whole unit"},
	{Name: "negate", Types: []string{"boolean"}, Doc: "invert the grader: its score becomes 1 - score"},
	{Name: "threshold", Types: []string{"number"}, Doc: "the score this grader needs to pass (default 0.8)"},
}

// Env is what a grader gets besides its options.
type Env struct {
	// Judge is the LLM judge; nil when none is configured, which is fine
	// for graders that do not need one (and for checking options).
	Judge *judge.Judge
	// Dir is where relative paths in the options (prompt files, scripts,
	// schemas) start: the eval file's directory.
	Dir string
	// Graders are the definitions a grader made of other graders (a
	// composite) looks its members up in: the caller's list, so a member
	// may be a grader of the caller's own. Nil means All.
	Graders []*Definition
}

// Outcome is what a grader's function computes; New turns it into an
// agenteval.Score with the fields every score shares.
type Outcome struct {
	Score float64
	// Fail makes the verdict fail whatever the score: a rubric whose
	// required criterion failed.
	Fail bool
	// Skip makes the score a skip, with Reason saying why: the grader did
	// not grade (a program a dry run does not start), so the score counts
	// neither way.
	Skip       bool
	Reason     string
	Assertions []agenteval.Assertion
	Details    map[string]any
	Usage      *agenteval.Usage
	// Scores are the scores of a composite's members.
	Scores []agenteval.Score
}

// Func grades one unit.
type Func func(ctx context.Context, in *agenteval.GradeInput) (Outcome, error)

// Tracking follows one conversation for a trackable grader.
type Tracking interface {
	// Observe starts grading the conversation as it stands after turn
	// in.Turn (in.Output holds it from the first turn on). It does not
	// block; observations run one after another, in turn order.
	Observe(ctx context.Context, in *agenteval.GradeInput)
	// Settled waits for the observation of turn k and reports whether the
	// score can no longer change (every subgoal achieved).
	Settled(k int) bool
	// Err is why the observations stopped (a judge that failed past its
	// retries), or nil.
	Err() error
	// Wait waits for the observations under way and returns what they
	// cost, for a conversation that ends without being graded.
	Wait() agenteval.Usage
	// Finish waits for the observations and grades the whole
	// conversation.
	Finish(ctx context.Context, in *agenteval.GradeInput) (Outcome, error)
}

// Names lists the names of defs, in order.
func Names(defs []*Definition) []string {
	out := make([]string, len(defs))
	for i, d := range defs {
		out[i] = d.Name
	}
	return out
}

// normalize maps a type name onto a definition's form: kebab-case becomes
// snake_case, and a not_ prefix is split off.
func normalize(typ string) (name string, negate bool) {
	n := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(typ)), "-", "_")
	if rest, ok := strings.CutPrefix(n, "not_"); ok {
		return rest, true
	}
	return n, false
}

// Find looks a grader type up in defs by name or alias, in any of the
// spellings eval files use (snake_case, kebab-case, a not_ prefix, which it
// reports).
func Find(defs []*Definition, typ string) (d *Definition, negate bool, ok bool) {
	name, negate := normalize(typ)
	for _, d := range defs {
		if d == nil {
			continue // Validate reports it
		}
		if d.Name == name {
			return d, negate, true
		}
		for _, a := range d.Aliases {
			if a == name {
				return d, negate, true
			}
		}
	}
	return nil, false, false
}

// isSnake says whether n is snake_case: lower-case words of letters and
// digits, the first starting with a letter, joined by single
// underscores. It is written out rather than a regexp because NewPlan
// validates a caller's list for every test.
func isSnake(n string) bool {
	if n == "" || n[0] < 'a' || n[0] > 'z' || n[len(n)-1] == '_' {
		return false
	}
	for i := 1; i < len(n); i++ {
		c := n[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '_' && n[i-1] != '_':
		default:
			return false
		}
	}
	return true
}

// Validate checks a list of definitions, as a driver should before using
// it: every definition has a snake_case name, a doc and a constructor;
// names and aliases are unique across the list; no param repeats a common
// setting or another param.
func Validate(defs []*Definition) error {
	seen := make(map[string]string, 2*len(defs))
	var errs, params []string
	for i, d := range defs {
		if d == nil {
			errs = append(errs, fmt.Sprintf("definition %d is nil", i))
			continue
		}
		for j := -1; j < len(d.Aliases); j++ {
			n := d.Name
			if j >= 0 {
				n = d.Aliases[j]
			}
			switch {
			case !isSnake(n):
				errs = append(errs, fmt.Sprintf("%s: name %q is not snake_case", d.Name, n))
			case strings.HasPrefix(n, "not_"):
				errs = append(errs, fmt.Sprintf("%s: name %q starts with not_, which negates", d.Name, n))
			}
			if other, dup := seen[n]; dup {
				errs = append(errs, fmt.Sprintf("%s: name %q is taken by %s", d.Name, n, other))
			}
			seen[n] = d.Name
		}
		if strings.TrimSpace(d.Doc) == "" {
			errs = append(errs, fmt.Sprintf("%s: no Doc", d.Name))
		}
		if d.New == nil && d.Track == nil {
			errs = append(errs, fmt.Sprintf("%s: neither New nor Track is set", d.Name))
		}
		// A grader has few settings: a slice, reused, beats a map each.
		params = params[:0]
		for _, c := range Common {
			params = append(params, c.Name)
		}
		for _, p := range d.Params {
			for j := -1; j < len(p.Aliases); j++ {
				n := p.Name
				if j >= 0 {
					n = p.Aliases[j]
				}
				if slices.Contains(params, n) {
					errs = append(errs, fmt.Sprintf("%s: setting %q is repeated or shadows a common setting", d.Name, n))
				}
				params = append(params, n)
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid grader definitions:\n\t%s", strings.Join(errs, "\n\t"))
	}
	return nil
}

// Define makes a Definition whose options are the struct O, the way the
// built-in graders are made (see Length): Params come from O's exported
// fields (the json name, and the doc, enum and alias tags), and a map of
// settings from an eval file decodes into O field by field, so an unknown
// or mistyped setting is reported as it is for a built-in grader. build
// checks the decoded options and makes the grader's function; Go code may
// also pass an O (or *O) as the options. needsJudge, when set, says from
// the options whether the grader calls the judge; nil means never.
func Define[O any](d Definition, needsJudge func(O) bool, build func(O, Env) (Func, error)) *Definition {
	return define(d, needsJudge, build)
}

// define makes a Definition whose options are the struct O. Its Params
// come from O's fields (json name, `doc` tag, and the field's type) and
// override anything d.Params says about the same setting; settings maps
// decode into O field by field, so an error names the setting. build
// checks the decoded options and makes the grader's function. needsJudge,
// when set, decides from the options whether the judge is called.
func define[O any](d Definition, needsJudge func(O) bool, build func(O, Env) (Func, error)) *Definition {
	var judged func(O, []*Definition) bool
	if needsJudge != nil {
		judged = func(o O, _ []*Definition) bool { return needsJudge(o) }
	}
	return withOptions(d, judged, false, func(o O, env Env) (Func, func() Tracking, error) {
		fn, err := build(o, env)
		return fn, nil, err
	})
}

// tracked is define for a judged grader that follows a conversation:
// track makes what starts one.
func tracked[O any](d Definition, track func(O, Env) (func() Tracking, error)) *Definition {
	return withOptions(d, func(O, []*Definition) bool { return true }, true, func(o O, env Env) (Func, func() Tracking, error) {
		start, err := track(o, env)
		if err != nil {
			return nil, nil, err
		}
		// Graded once it is over, it starts and finishes at once.
		finish := func(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
			return start().Finish(ctx, in)
		}
		return finish, start, nil
	})
}

// withOptions is define and tracked: build makes the grader from decoded
// options, and also what starts a conversation for a grader that tracks
// one, which has Track instead of New. needsJudge also gets the graders
// the options' own members are looked up in (a composite's).
func withOptions[O any](d Definition, needsJudge func(O, []*Definition) bool, tracks bool, build func(O, Env) (Func, func() Tracking, error)) *Definition {
	d.Params = mergeParams(paramsOf(reflect.TypeFor[O]()), d.Params)
	params := d.Params
	d.bind = func(options any, defs []*Definition) (bound, error) {
		o, err := decodeOptions[O](options, params)
		if err != nil {
			return bound{}, err
		}
		return bound{
			needsJudge: needsJudge != nil && needsJudge(o, defs),
			make:       func(env Env) (Func, func() Tracking, error) { return build(o, env) },
		}, nil
	}
	def := &d
	def.self = def
	// The exported functions know no caller's list; they look members up
	// in All.
	if needsJudge != nil {
		def.NeedsJudge = func(options any) bool {
			b, err := def.bind(options, nil)
			return err == nil && b.needsJudge
		}
	}
	made := func(options any, env Env) (Func, func() Tracking, error) {
		b, err := def.bind(options, env.Graders)
		if err != nil {
			return nil, nil, err
		}
		return b.make(env)
	}
	if tracks {
		def.Track = func(options any, env Env) (func() Tracking, error) {
			_, start, err := made(options, env)
			return start, err
		}
	} else {
		def.New = func(options any, env Env) (Func, error) {
			fn, _, err := made(options, env)
			return fn, err
		}
	}
	return def
}

// options decodes a spec's options for d; defs are the caller's graders
// (nil: All), for a composite's members. A definition made by Define (or
// define, tracked) decodes into its options struct. One written by hand
// gets its settings checked against its Params, with aliases renamed and
// a number or true/false given to a string setting turned into text, as
// for a built-in grader; then New or Track makes the grader.
func (d *Definition) options(options any, defs []*Definition) (bound, error) {
	if d.bind != nil && d.self == d {
		return d.bind(options, defs)
	}
	if settings, ok := options.(map[string]any); ok {
		checked, err := checkSettings(settings, d.Params)
		if err != nil {
			return bound{}, err
		}
		options = checked
	}
	b := bound{needsJudge: d.NeedsJudge != nil && d.NeedsJudge(options)}
	switch {
	case d.New != nil:
		b.make = func(env Env) (Func, func() Tracking, error) {
			fn, err := d.New(options, env)
			if err == nil && fn == nil {
				err = fmt.Errorf("New returned neither a function nor an error")
			}
			return fn, nil, err
		}
	case d.Track != nil:
		b.make = func(env Env) (Func, func() Tracking, error) {
			start, err := d.Track(options, env)
			if err == nil && start == nil {
				err = fmt.Errorf("Track returned neither a function nor an error")
			}
			if err != nil {
				return nil, nil, err
			}
			finish := func(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
				return start().Finish(ctx, in)
			}
			return finish, start, nil
		}
	default:
		return bound{}, fmt.Errorf("the definition sets neither New nor Track")
	}
	return b, nil
}

// judged is define for a grader that always calls the judge.
func judged[O any](d Definition, build func(O, Env) (Func, error)) *Definition {
	return define(d, func(O) bool { return true }, build)
}

// deterministic is define for a grader that never calls the judge.
func deterministic[O any](d Definition, build func(O, Env) (Func, error)) *Definition {
	return define(d, nil, build)
}

func mergeParams(derived, given []Param) []Param {
	for _, g := range given {
		found := false
		for i := range derived {
			if derived[i].Name != g.Name {
				continue
			}
			found = true
			if g.Doc != "" {
				derived[i].Doc = g.Doc
			}
			if g.Types != nil {
				derived[i].Types = g.Types
			}
			derived[i].Enum = append(derived[i].Enum, g.Enum...)
			derived[i].Aliases = append(derived[i].Aliases, g.Aliases...)
		}
		if !found {
			derived = append(derived, g)
		}
	}
	return derived
}

// NoOptions is the options of a grader that has no settings.
type NoOptions struct{}
