package target

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// a2aErrorNames names the JSON-RPC error codes of JSON-RPC 2.0 and A2A
// (spec 1.0 §5.4 and §9.5; 0.3 has the same codes up to -32007).
var a2aErrorNames = map[int]string{
	-32700: "invalid JSON",
	-32600: "invalid request",
	-32601: "method not found",
	-32602: "invalid parameters",
	-32603: "internal error",
	-32001: "task not found",
	-32002: "task not cancelable",
	-32003: "push notifications not supported",
	-32004: "unsupported operation",
	-32005: "content type not supported",
	-32006: "invalid agent response",
	-32007: "extended agent card not configured",
	-32008: "extension support required",
	-32009: "version not supported",
}

func (e *rpcError) Error() string {
	name := a2aErrorNames[e.Code]
	if name == "" {
		name = "error"
	}
	s := fmt.Sprintf("JSON-RPC error %d (%s): %s", e.Code, name, e.Message)
	if e.Code == -32601 {
		s += "; the agent card's interface version and the server's disagree"
	}
	return s
}

// rpcResponse is a JSON-RPC response, or one event of a stream.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
}

type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// call makes one JSON-RPC call and hands each answer to each: once for a
// plain call; once per event, in order, for a stream (an agent may also
// answer a streaming call with one JSON response). each returns true to
// stop reading.
func (a *A2AAgent) call(ctx context.Context, ep *a2aEndpoint, method string, params any, stream bool, traceparent string, each func(*a2aEvent) (bool, error)) error {
	body, err := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: a.rpcID.Add(1), Method: method, Params: params})
	if err != nil {
		return fmt.Errorf("encode %s: %w", method, err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %v", method, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	if stream {
		hr.Header.Set("Accept", "text/event-stream")
	} else {
		hr.Header.Set("Accept", "application/json")
	}
	if ep.versionHeader != "" {
		hr.Header.Set("A2A-Version", ep.versionHeader)
	}
	a.setHeaders(hr, traceparent)
	resp, err := a.client().Do(hr)
	if err != nil {
		return fmt.Errorf("%s: %w", method, a.transportError(ctx, err))
	}
	defer resp.Body.Close()
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		// Servers answer some JSON-RPC errors with an HTTP error status.
		var r rpcResponse
		if json.Unmarshal(data, &r) == nil && r.Error != nil {
			return fmt.Errorf("%s answered HTTP %d, %w", method, resp.StatusCode, r.Error)
		}
		hint := ""
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			hint = "; give the credentials it needs as headers: in the target's a2a block"
		}
		return fmt.Errorf("%s answered HTTP %d: %s%s", method, resp.StatusCode, snippet(string(data)), hint)
	}
	if media == "text/event-stream" {
		return readSSE(resp.Body, func(data []byte) (bool, error) {
			return a.handleRPC(method, data, each)
		})
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return fmt.Errorf("%s: read the answer: %w", method, a.transportError(ctx, err))
	}
	_, err = a.handleRPC(method, data, each)
	return err
}

// handleRPC reads one JSON-RPC response and passes its result on.
func (a *A2AAgent) handleRPC(method string, data []byte, each func(*a2aEvent) (bool, error)) (bool, error) {
	var r rpcResponse
	if err := json.Unmarshal(data, &r); err != nil || (r.Result == nil && r.Error == nil) {
		return true, fmt.Errorf("%s: the answer is not a JSON-RPC response: %q", method, snippet(string(data)))
	}
	if r.Error != nil {
		return true, fmt.Errorf("%s failed with %w", method, r.Error)
	}
	ev, err := decodeEvent(r.Result)
	if err != nil {
		return true, fmt.Errorf("%s: %w", method, err)
	}
	return each(ev)
}

// readSSE reads a text/event-stream body and hands each event's data to
// each, until each says stop or the stream ends. Events of any name are
// read alike: A2A servers send JSON-RPC responses, errors included, as
// data.
func readSSE(body io.Reader, each func([]byte) (bool, error)) error {
	br := bufio.NewReaderSize(body, 64<<10)
	var data bytes.Buffer
	flush := func() (bool, error) {
		if data.Len() == 0 {
			return false, nil
		}
		b := bytes.Clone(data.Bytes())
		data.Reset()
		return each(b)
	}
	for {
		line, err := br.ReadString('\n')
		if len(line) > 0 {
			line = strings.TrimRight(line, "\r\n")
			switch {
			case line == "":
				if stop, ferr := flush(); ferr != nil || stop {
					return ferr
				}
			case strings.HasPrefix(line, ":"):
				// A comment: a keep-alive.
			default:
				field, value, _ := strings.Cut(line, ":")
				value = strings.TrimPrefix(value, " ")
				if field == "data" {
					if data.Len() > 0 {
						data.WriteByte('\n')
					}
					data.WriteString(value)
					if data.Len() > 32<<20 {
						return fmt.Errorf("a stream event is larger than 32 MiB")
					}
				}
			}
		}
		if err == io.EOF {
			_, ferr := flush()
			return ferr
		}
		if err != nil {
			return fmt.Errorf("the stream broke: %w", err)
		}
	}
}
