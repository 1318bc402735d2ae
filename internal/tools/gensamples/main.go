// Command gensamples writes a synthetic Ragas JSONL dataset for load and
// memory measurements: restaurant-booking conversations with tool calls,
// a reference, and a mix of right, wrong, reordered and retried calls.
//
//	go run ./internal/tools/gensamples -n 100000 > /tmp/100k.jsonl
//
// It imports only the standard library.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
)

func main() {
	n := flag.Int("n", 100000, "number of samples")
	flag.Parse()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	enc := json.NewEncoder(w)
	cuisines := []string{"Chinese", "Thai", "Italian", "Mexican", "Indian"}
	for i := 0; i < *n; i++ {
		c := cuisines[i%len(cuisines)]
		name := fmt.Sprintf("Restaurant %d", i%97)
		search := map[string]any{"name": "restaurant_search", "args": map[string]any{"cuisine": c, "time": "8pm", "party_size": 2 + i%4}}
		book := map[string]any{"name": "restaurant_book", "args": map[string]any{"name": name, "time": "8pm", "party_size": 2 + i%4}}
		calls := []map[string]any{search, book}
		switch i % 4 {
		case 1: // wrong argument
			calls = []map[string]any{search, {"name": "restaurant_book", "args": map[string]any{"name": name, "time": "9pm", "party_size": 2 + i%4}}}
		case 2: // reordered
			calls = []map[string]any{book, search}
		case 3: // retried
			calls = []map[string]any{search, search, book}
		}
		msgs := []map[string]any{{"type": "human", "content": fmt.Sprintf("Book a %s place for %d at 8pm, sample %d", c, 2+i%4, i)}}
		for _, call := range calls {
			msgs = append(msgs,
				map[string]any{"type": "ai", "content": "Working on it.", "tool_calls": []any{call}},
				map[string]any{"type": "tool", "content": "ok: " + name})
		}
		msgs = append(msgs, map[string]any{"type": "ai", "content": "Your table at " + name + " is booked for 8pm."})
		row := map[string]any{
			"id":                   fmt.Sprintf("s%06d", i),
			"user_input":           msgs,
			"reference":            "A table is booked for 8pm.",
			"reference_tool_calls": []any{search, book},
			"reference_topics":     []string{"Restaurant Booking"},
		}
		if err := enc.Encode(row); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
