package mcptools

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resultText is what the model reads of a tool's result: its text parts,
// one per line; the structured content as JSON when no part is text; and a
// short description of each image, audio clip and resource.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	texts := 0
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
			texts++
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link: %s%s]", c.URI, nameNote(c.Name, c.MIMEType)))
		case *mcp.EmbeddedResource:
			r := c.Resource
			switch {
			case r == nil:
				parts = append(parts, "[resource]")
			case r.Text != "":
				// Text the server chose to return in full is the answer.
				parts = append(parts, r.Text)
				texts++
			default:
				parts = append(parts, fmt.Sprintf("[resource: %s%s, %d bytes]", r.URI, nameNote("", r.MIMEType), len(r.Blob)))
			}
		default:
			b, err := json.Marshal(c)
			if err != nil {
				parts = append(parts, fmt.Sprintf("[content of type %T]", c))
				continue
			}
			parts = append(parts, string(b))
		}
	}
	if texts == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return strings.Join(append([]string{string(b)}, parts...), "\n")
		}
	}
	return strings.Join(parts, "\n")
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

func nameNote(name, mime string) string {
	var s []string
	if name != "" {
		s = append(s, name)
	}
	if mime != "" {
		s = append(s, mime)
	}
	if len(s) == 0 {
		return ""
	}
	return " (" + strings.Join(s, ", ") + ")"
}

// schemaMap makes a tool's input schema the map agent.Tool holds. A tool
// without one takes an object of anything.
func schemaMap(schema any) (map[string]any, error) {
	if schema == nil {
		return map[string]any{"type": "object"}, nil
	}
	if m, ok := schema.(map[string]any); ok {
		return m, nil
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %s", b)
	}
	if m == nil {
		m = map[string]any{"type": "object"}
	}
	return m, nil
}

// withHeaders is base (or a plain client) whose requests carry headers.
func withHeaders(base *http.Client, headers map[string]string) *http.Client {
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	if len(headers) == 0 {
		return c
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = &headerTransport{base: rt, headers: headers}
	return c
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}
