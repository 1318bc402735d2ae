package suite

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"
)

// csvItems reads AgentV v5's CSV datasets: one test per row. Columns are
// vars (vars.name or plain name), except id, description and the magic
// columns: __expected (and __expected2, ...) an assertion in promptfoo's
// short form (contains:text, icontains-any:a,b, regex:..., is-json,
// llm-rubric:..., latency(500), cost(0.01)), __metric its name,
// __threshold the test's pass mark, __metadata:key a metadata entry.
func (d *decoder) csvItems(data []byte) []testItem {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		d.fail(nil, "not valid CSV: %v", err)
		return nil
	}
	if len(rows) < 2 {
		return nil
	}
	head := rows[0]
	var out []testItem
	for i, row := range rows[1:] {
		line := i + 2
		t := map[string]any{}
		vars := map[string]any{}
		meta := map[string]any{}
		var asserts []any
		metric := ""
		for j, cell := range row {
			if j >= len(head) || cell == "" {
				continue
			}
			col := strings.TrimSpace(head[j])
			switch {
			case col == "id" || col == "description":
				t[col] = cell
			case strings.HasPrefix(col, "__expected"):
				if a := csvAssertion(cell); a != nil {
					asserts = append(asserts, a)
				}
			case col == "__metric":
				metric = cell
			case col == "__threshold":
				if f, err := strconv.ParseFloat(cell, 64); err == nil {
					t["threshold"] = f
				}
			case strings.HasPrefix(col, "__metadata:"):
				meta[strings.TrimPrefix(col, "__metadata:")] = cell
			case strings.HasPrefix(col, "__"):
				d.warn(&yaml.Node{Line: line, Column: j + 1}, "CSV column %s is not one agenteval reads; it is ignored", col)
			default:
				vars[strings.TrimPrefix(col, "vars.")] = cell
			}
		}
		if metric != "" {
			for _, a := range asserts {
				if m, ok := a.(map[string]any); ok && m["metric"] == nil {
					m["metric"] = metric
				}
			}
		}
		if len(vars) > 0 {
			t["vars"] = vars
		}
		if len(meta) > 0 {
			t["metadata"] = meta
		}
		if len(asserts) > 0 {
			t["assert"] = asserts
		}
		if t["id"] == nil {
			t["id"] = fmt.Sprintf("row-%d", i+1)
		}
		out = append(out, testItem{n: valueNode(t, &yaml.Node{Line: line, Column: 1}), d: d})
	}
	return out
}

// csvAssertion reads promptfoo's short form of an assertion.
func csvAssertion(cell string) any {
	cell = strings.TrimSpace(cell)
	negate := false
	if rest, ok := strings.CutPrefix(cell, "not-"); ok {
		cell, negate = rest, true
	}
	var a map[string]any
	switch {
	case cell == "is-json":
		a = map[string]any{"type": "is-json"}
	case strings.HasPrefix(cell, "latency(") && strings.HasSuffix(cell, ")"):
		a = map[string]any{"type": "latency", "threshold": numberOr(cell[8 : len(cell)-1])}
	case strings.HasPrefix(cell, "cost(") && strings.HasSuffix(cell, ")"):
		a = map[string]any{"type": "cost", "threshold": numberOr(cell[5 : len(cell)-1])}
	case strings.HasPrefix(cell, "file://"):
		a = map[string]any{"type": "python", "value": cell}
	default:
		typ, value, ok := strings.Cut(cell, ":")
		if !ok {
			return cell // plain text: a rubric criterion
		}
		switch typ {
		case "grade":
			typ = "llm-rubric"
		case "fn", "eval":
			typ = "javascript"
		}
		var v any = value
		if strings.HasSuffix(typ, "-any") || strings.HasSuffix(typ, "-all") {
			var list []any
			for _, x := range strings.Split(value, ",") {
				list = append(list, strings.TrimSpace(x))
			}
			v = list
		}
		a = map[string]any{"type": typ, "value": v}
	}
	if negate {
		a["type"] = "not-" + a["type"].(string)
	}
	return a
}

func numberOr(s string) any {
	if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
		return f
	}
	return s
}
