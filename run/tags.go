package run

import (
	"fmt"
	"strings"

	"github.com/agenteval/agenteval"
)

// Tags are a test's metadata.tags: a list, or one string of
// comma-separated names. Reports filter on them.
func Tags(t *agenteval.Test) []string {
	var out []string
	switch v := t.Metadata["tags"].(type) {
	case string:
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	case []any:
		for _, x := range v {
			if s := strings.TrimSpace(fmt.Sprint(x)); s != "" && x != nil {
				out = append(out, s)
			}
		}
	case []string:
		out = append(out, v...)
	}
	return out
}
