package provider

import (
	"strings"
	"testing"
)

// TestChatOnly: an adapter that speaks only its own API refuses the
// Responses API and its store setting, saying what to do.
func TestChatOnly(t *testing.T) {
	no := false
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Provider: "anthropic"}, ""},
		{Config{Provider: "anthropic", API: "chat"}, ""},
		{Config{Provider: "anthropic", API: "responses"}, "api: responses is OpenAI's Responses API, which anthropic models do not speak; remove api:"},
		{Config{Provider: "gemini", Store: &no}, "store is a setting of OpenAI's Responses API, which gemini models do not speak"},
	} {
		err := ChatOnly(tc.cfg)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}
