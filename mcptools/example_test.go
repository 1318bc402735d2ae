package mcptools_test

import (
	"context"
	"fmt"
	"log"

	"github.com/agenteval/agenteval/mcptools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An MCP server's tools become agent tools. Here the server runs in the
// same program, over the SDK's in-memory transport; a program speaking
// MCP on stdio is Server{Command: []string{"node", "tools.mjs"}}, and a
// Streamable HTTP endpoint Server{URL: "http://127.0.0.1:7000/mcp"}. Give
// the tools to a model with agent.ToolLoop{Model: m, Tools: c.Tools()}.
func Example() {
	ctx := context.Background()
	server := mcp.NewServer(&mcp.Implementation{Name: "weather"}, nil)
	type in struct {
		City string `json:"city"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "get_weather", Description: "The weather in a city."},
		func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny in " + a.City}}}, nil, nil
		})
	serverSide, clientSide := mcp.NewInMemoryTransports()
	if _, err := server.Connect(ctx, serverSide, nil); err != nil {
		log.Fatal(err)
	}

	c, err := mcptools.Connect(ctx, []mcptools.Server{{Name: "weather", Transport: clientSide}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for _, t := range c.Tools() {
		fmt.Printf("%s (from %s): %s\n", t.Name, c.ServerOf(t.Name), t.Description)
		out, err := t.Run(ctx, map[string]any{"city": "Lisbon"})
		fmt.Println(out, err)
	}
	// Output:
	// get_weather (from weather): The weather in a city.
	// sunny in Lisbon <nil>
}
