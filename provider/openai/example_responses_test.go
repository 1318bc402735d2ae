package openai_test

import (
	"context"
	"fmt"
	"log"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/provider"
	_ "github.com/agenteval/agenteval/provider/openai"
)

// A model over the Responses API: API "responses" in the config (api:
// responses on a target). With store left unset, the second call of a
// conversation continues the first by previous_response_id and sends only
// the new user message.
func Example_responses() {
	s, err := fakellm.Start(fakellm.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	s.Add(&fakellm.Rule{Match: fakellm.Contains("France"), Times: 1, Reply: fakellm.Reply{Content: "Paris."}},
		&fakellm.Rule{Reply: fakellm.Reply{Content: "Lyon."}})

	cfg, err := provider.ParseSpec("openai:gpt-4.1-mini")
	if err != nil {
		log.Fatal(err)
	}
	cfg.BaseURL, cfg.APIKey, cfg.API = s.URL, "sk-example", "responses"
	m, err := provider.Open(cfg)
	if err != nil {
		log.Fatal(err)
	}
	conv := agenteval.Conversation{
		{Role: agenteval.RoleSystem, Content: "Answer in one word."},
		{Role: agenteval.RoleUser, Content: "Capital of France?"},
	}
	for _, next := range []string{"And its second city?", ""} {
		resp, err := m.Generate(context.Background(), &agenteval.ModelRequest{Messages: conv})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(resp.Message.Content)
		conv = append(conv, resp.Message)
		if next != "" {
			conv = append(conv, agenteval.Message{Role: agenteval.RoleUser, Content: next})
		}
	}
	for _, r := range s.Requests() {
		fmt.Printf("%s continues %q\n", r.Path, r.PreviousResponseID)
	}
	// Output:
	// Paris.
	// Lyon.
	// /v1/responses continues ""
	// /v1/responses continues "resp_fake1"
}
