package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/agenteval/agenteval/internal/jsonpos"
)

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

// PriceTable maps model names, or name prefixes, to prices. A dated model
// name such as gpt-4o-mini-2024-07-18 takes the price of its longest
// matching prefix.
type PriceTable struct {
	Models map[string]Price
	// FreeProviders are providers whose models cost nothing (local servers).
	FreeProviders map[string]bool
}

// DefaultPrices returns the built-in table: list prices of common hosted
// models as published by their providers in 2025. They change; override
// them with LoadPrices when it matters.
func DefaultPrices() *PriceTable {
	return &PriceTable{
		Models: map[string]Price{
			"gpt-4o":                {2.50, 10.00},
			"gpt-4o-mini":           {0.15, 0.60},
			"gpt-4.1":               {2.00, 8.00},
			"gpt-4.1-mini":          {0.40, 1.60},
			"gpt-4.1-nano":          {0.10, 0.40},
			"gpt-5":                 {1.25, 10.00},
			"gpt-5-mini":            {0.25, 2.00},
			"gpt-5-nano":            {0.05, 0.40},
			"o3":                    {2.00, 8.00},
			"o3-mini":               {1.10, 4.40},
			"o4-mini":               {1.10, 4.40},
			"gpt-3.5-turbo":         {0.50, 1.50},
			"claude-3-haiku":        {0.25, 1.25},
			"claude-3-5-haiku":      {0.80, 4.00},
			"claude-haiku-4-5":      {1.00, 5.00},
			"claude-3-5-sonnet":     {3.00, 15.00},
			"claude-3-7-sonnet":     {3.00, 15.00},
			"claude-sonnet-4":       {3.00, 15.00},
			"claude-opus-4":         {15.00, 75.00},
			"gemini-1.5-flash":      {0.075, 0.30},
			"gemini-1.5-pro":        {1.25, 5.00},
			"gemini-2.0-flash":      {0.10, 0.40},
			"gemini-2.0-flash-lite": {0.075, 0.30},
			"gemini-2.5-flash":      {0.30, 2.50},
			"gemini-2.5-flash-lite": {0.10, 0.40},
			"gemini-2.5-pro":        {1.25, 10.00},
		},
		FreeProviders: map[string]bool{"ollama": true},
	}
}

// Lookup returns the price of a model, and whether one is known. Provider
// prefixes such as "openai/" (OpenRouter's naming) are ignored.
func (t *PriceTable) Lookup(provider, model string) (Price, bool) {
	if t == nil {
		return Price{}, false
	}
	if p, ok := t.Models[provider+":"+model]; ok {
		return p, true
	}
	if t.FreeProviders[provider] {
		return Price{}, true
	}
	name := strings.ToLower(model)
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	best, bestLen := Price{}, -1
	for k, p := range t.Models {
		if strings.HasPrefix(name, strings.ToLower(k)) && len(k) > bestLen {
			// A prefix must end at a word boundary: gpt-4o must not price gpt-4o1.
			if rest := name[len(k):]; rest == "" || rest[0] == '-' || rest[0] == '@' || rest[0] == ':' || rest[0] == '.' {
				best, bestLen = p, len(k)
			}
		}
	}
	return best, bestLen >= 0
}

// Cost is the price of a call, or nil when no price is known.
func (t *PriceTable) Cost(provider, model string, in, out int64) *float64 {
	p, ok := t.Lookup(provider, model)
	if !ok {
		return nil
	}
	c := (float64(in)*p.Input + float64(out)*p.Output) / 1e6
	return &c
}

// LoadPrices reads a JSON file of {"model-or-prefix": {"input": X, "output":
// Y}} (dollars per million tokens) over the built-in table. A key written
// "provider:model" applies to that provider only.
// Each entry must give both input and output, and nothing else, so that a
// typo never prices a model at $0.
func LoadPrices(path string) (*PriceTable, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read price table: %w", err)
	}
	const shape = `write {"model": {"input": 0.15, "output": 0.6}} in dollars per million tokens`
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("price table %s: %v; %s", path, err, shape)
	}
	t := DefaultPrices()
	var errs []string
	for _, k := range sortedNames(m) {
		at := func(msg string) {
			line, col := jsonpos.LineCol(b, jsonpos.Offset(b, jsonpos.Path{k}))
			errs = append(errs, fmt.Sprintf("%s:%d:%d: %q %s", path, line, col, k, msg))
		}
		var p struct {
			Input  *float64 `json:"input"`
			Output *float64 `json:"output"`
		}
		dec := json.NewDecoder(bytes.NewReader(m[k]))
		dec.DisallowUnknownFields()
		switch err := dec.Decode(&p); {
		case err != nil:
			at(fmt.Sprintf("is not a price: %v; %s", err, shape))
		case p.Input == nil || p.Output == nil:
			at("needs both input and output (dollars per million tokens); a missing one would count as $0")
		case *p.Input < 0 || *p.Output < 0:
			at("has a negative price")
		default:
			t.Models[k] = Price{Input: *p.Input, Output: *p.Output}
		}
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	return t, nil
}

func sortedNames(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
