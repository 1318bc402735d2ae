// Command agent is the quickstart's agent under test: a small, rule-based
// restaurant assistant that speaks agenteval's command protocol. It reads
// one JSON request per line on stdin ({"conversation_id", "turn",
// "messages"}: the whole history) and writes one reply per line on stdout
// ({"messages": [...]}): assistant messages, the tool calls it makes, and
// the results of the tools it runs itself.
//
// It keeps no state between turns: everything it needs is in the history,
// as it would be for an agent behind an API.
//
// Like every example, it may import any public package of agenteval, but it
// needs only the standard library, as an agent written in another language
// would.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

type toolCall struct {
	ID   string         `json:"id"`
	Name string         `json:"name"`
	Args map[string]any `json:"args"`
}

type message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type request struct {
	ConversationID string    `json:"conversation_id"`
	Turn           int       `json:"turn"`
	Messages       []message `json:"messages"`
}

var (
	timeRE  = regexp.MustCompile(`\b(\d{1,2})\s*(am|pm)\b`)
	partyRE = regexp.MustCompile(`\bfor (\d+|two|three|four|five|six)\b`)
	nameRE  = regexp.MustCompile(`(?i)\bunder (?:the name )?([A-Z][a-z]+)`)
	words   = map[string]string{"two": "2", "three": "3", "four": "4", "five": "5", "six": "6"}
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "agent: bad request:", err)
			os.Exit(1)
		}
		out.Encode(map[string]any{"messages": respond(req)})
	}
}

func respond(req request) []message {
	last := ""
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			last = req.Messages[i].Content
			break
		}
	}
	low := strings.ToLower(last)
	id := func(name string) string { return fmt.Sprintf("%s-%d", name, req.Turn) }
	switch {
	case strings.Contains(low, "hours") || strings.Contains(low, "open"):
		return say("We are open every day from 5pm to 11pm.")
	case strings.Contains(low, "make it") || strings.Contains(low, "change"):
		conf := find(req.Messages, "book_table", "confirmation")
		t := timeRE.FindString(low)
		if conf == "" || t == "" {
			return say("Which booking, and what time should I move it to?")
		}
		call := toolCall{ID: id("update"), Name: "update_booking", Args: map[string]any{"confirmation": conf, "time": strings.ReplaceAll(t, " ", "")}}
		return act(call, "updated", fmt.Sprintf("Done: booking %s is now at %s.", conf, call.Args["time"]))
	case strings.Contains(low, "yes") || strings.Contains(low, "confirm"):
		args := lastArgs(req.Messages, "check_availability")
		if args == nil {
			return say("What time and for how many people?")
		}
		name := "Guest"
		if m := nameRE.FindStringSubmatch(last); m != nil {
			name = m[1]
		}
		conf := "QS-" + strings.TrimSuffix(fmt.Sprint(args["time"]), "pm") + fmt.Sprint(args["party_size"])
		call := toolCall{ID: id("book"), Name: "book_table", Args: map[string]any{"name": name, "time": args["time"], "party_size": args["party_size"]}}
		msgs := act(call, `{"confirmation": "`+conf+`"}`, fmt.Sprintf("Booked: a table for %v at %v under %s. Your confirmation is %s.", args["party_size"], args["time"], name, conf))
		return msgs
	case strings.Contains(low, "book") || strings.Contains(low, "table"):
		t := timeRE.FindString(low)
		p := partyRE.FindStringSubmatch(low)
		if t == "" || p == nil {
			return say("Happy to book. What time, and for how many people?")
		}
		party := p[1]
		if w, ok := words[party]; ok {
			party = w
		}
		var n int
		fmt.Sscan(party, &n)
		call := toolCall{ID: id("check"), Name: "check_availability", Args: map[string]any{"time": strings.ReplaceAll(t, " ", ""), "party_size": n}}
		return act(call, `{"available": true}`, fmt.Sprintf("Good news: %s is free for %d. Shall I book it? Tell me the name for the booking.", call.Args["time"], n))
	}
	return say("I can book tables and tell you our opening hours.")
}

func say(text string) []message {
	return []message{{Role: "assistant", Content: text}}
}

// act makes one tool call, runs the tool, and answers with text.
func act(call toolCall, result, text string) []message {
	return []message{
		{Role: "assistant", ToolCalls: []toolCall{call}},
		{Role: "tool", ToolCallID: call.ID, Content: result},
		{Role: "assistant", Content: text},
	}
}

func lastArgs(msgs []message, tool string) map[string]any {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, c := range msgs[i].ToolCalls {
			if c.Name == tool {
				return c.Args
			}
		}
	}
	return nil
}

// find returns a field of the JSON result of the last call to tool.
func find(msgs []message, tool, field string) string {
	var id string
	for i := len(msgs) - 1; i >= 0 && id == ""; i-- {
		for _, c := range msgs[i].ToolCalls {
			if c.Name == tool {
				id = c.ID
			}
		}
	}
	for _, m := range msgs {
		if m.Role == "tool" && m.ToolCallID == id {
			var v map[string]any
			if json.Unmarshal([]byte(m.Content), &v) == nil {
				return fmt.Sprint(v[field])
			}
		}
	}
	return ""
}
