package target

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/agenteval/agenteval/internal/redact"
)

// The agent card's well-known paths: spec 0.3 and 1.0, then the older
// name of spec 0.2, still served by some agents.
const (
	a2aCardPath    = "/.well-known/agent-card.json"
	a2aOldCardPath = "/.well-known/agent.json"
)

// a2aEndpoint is what the agent card says about how to talk to the agent:
// the JSON-RPC interface chosen, its protocol version and tenant, and
// whether it streams.
type a2aEndpoint struct {
	cardURL string
	url     string
	version string // a2aV10 or a2aV03: the wire form
	// versionHeader is the A2A-Version header: the interface's declared
	// version as Major.Minor, or none when it declares none (which the
	// spec reads as 0.3).
	versionHeader string
	tenant        string
	streaming     bool
	name          string
}

// wireCard holds the fields of an agent card that matter here, in either
// form: 1.0 lists supportedInterfaces (url, protocolBinding,
// protocolVersion, tenant); 0.3 gives url, preferredTransport and
// additionalInterfaces (url, transport), and protocolVersion for the card.
type wireCard struct {
	Name                 string `json:"name"`
	ProtocolVersion      string `json:"protocolVersion"`
	URL                  string `json:"url"`
	PreferredTransport   string `json:"preferredTransport"`
	AdditionalInterfaces []struct {
		URL       string `json:"url"`
		Transport string `json:"transport"`
	} `json:"additionalInterfaces"`
	SupportedInterfaces []struct {
		URL             string `json:"url"`
		ProtocolBinding string `json:"protocolBinding"`
		ProtocolVersion string `json:"protocolVersion"`
		Tenant          string `json:"tenant"`
	} `json:"supportedInterfaces"`
	Capabilities struct {
		Streaming *bool `json:"streaming"`
	} `json:"capabilities"`
	SecuritySchemes map[string]json.RawMessage `json:"securitySchemes"`
	// Security is 0.3's list of requirements: {scheme: [scopes]}.
	Security []map[string]json.RawMessage `json:"security"`
	// SecurityRequirements is 1.0's: {schemes: {scheme: {list: [scopes]}}}.
	SecurityRequirements []struct {
		Schemes map[string]json.RawMessage `json:"schemes"`
	} `json:"securityRequirements"`
}

// fetchCard reads the agent card: {url}/.well-known/agent-card.json, or
// the older agent.json when that is missing; a URL ending in .json is the
// card itself.
func (a *A2AAgent) fetchCard(ctx context.Context, traceparent string) (*a2aEndpoint, error) {
	base := strings.TrimRight(a.URL, "/")
	candidates := []string{base + a2aCardPath, base + a2aOldCardPath}
	if u, err := url.Parse(a.URL); err == nil && strings.HasSuffix(u.Path, ".json") {
		candidates = []string{a.URL}
	}
	var notFound []string
	for _, cardURL := range candidates {
		data, status, ctype, err := a.getCard(ctx, cardURL, traceparent)
		if err != nil {
			return nil, err
		}
		if status == http.StatusNotFound {
			notFound = append(notFound, cardURL)
			continue
		}
		if status < 200 || status > 299 {
			hint := ""
			if status == http.StatusUnauthorized || status == http.StatusForbidden {
				hint = "; give the credentials it needs as headers: in the target's a2a block"
			}
			return nil, fmt.Errorf("the agent card at %s answered HTTP %d: %s%s", cardURL, status, snippet(string(data)), hint)
		}
		var card wireCard
		if err := json.Unmarshal(data, &card); err != nil {
			return nil, fmt.Errorf("the agent card at %s is not JSON (Content-Type %q): %q", cardURL, ctype, snippet(string(data)))
		}
		ep, err := card.endpoint(cardURL)
		if err != nil {
			return nil, fmt.Errorf("the agent card at %s: %w", cardURL, err)
		}
		if err := card.checkSecurity(a.Headers, ep.url); err != nil {
			return nil, fmt.Errorf("the agent card at %s %w", cardURL, err)
		}
		card.noteSecrets(a.Headers)
		return ep, nil
	}
	return nil, fmt.Errorf("no agent card at %s (HTTP 404); url: should be the agent's base URL, where /.well-known/agent-card.json is served", strings.Join(notFound, " nor at "))
}

// getCard GETs one card URL with the target's headers.
func (a *A2AAgent) getCard(ctx context.Context, cardURL, traceparent string) (data []byte, status int, ctype string, err error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, cardURL, nil)
	if err != nil {
		return nil, 0, "", fmt.Errorf("the agent card URL %s: %v", cardURL, err)
	}
	hr.Header.Set("Accept", "application/json")
	// The official clients ask for the 1.0 card; an agent that also
	// speaks 0.3 lists both versions' interfaces in it.
	hr.Header.Set("A2A-Version", a2aV10)
	a.setHeaders(hr, traceparent)
	resp, err := a.client().Do(hr)
	if err != nil {
		return nil, 0, "", a.transportError(ctx, err)
	}
	defer resp.Body.Close()
	data, err = io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, 0, "", fmt.Errorf("read the agent card at %s: %v", cardURL, err)
	}
	return data, resp.StatusCode, resp.Header.Get("Content-Type"), nil
}

// endpoint picks the interface to use: the card's first JSON-RPC
// interface in a version spoken here (1.0, or 0.3 and the 0.2 it grew
// from), as the spec asks clients to prefer earlier entries.
func (c *wireCard) endpoint(cardURL string) (*a2aEndpoint, error) {
	ep := &a2aEndpoint{cardURL: cardURL, name: c.Name, streaming: c.Capabilities.Streaming != nil && *c.Capabilities.Streaming}
	var offered []string
	pick := func(rawURL, version, declared, tenant string) error {
		u, err := url.Parse(rawURL)
		if err != nil || rawURL == "" {
			return fmt.Errorf("its JSON-RPC interface has no usable url (%q)", rawURL)
		}
		// A relative URL is relative to the card.
		if base, err := url.Parse(cardURL); err == nil {
			u = base.ResolveReference(u)
		}
		ep.url, ep.version, ep.versionHeader, ep.tenant = u.String(), version, majorMinor(declared), tenant
		return nil
	}
	if len(c.SupportedInterfaces) > 0 {
		for _, in := range c.SupportedInterfaces {
			v := wireVersion(in.ProtocolVersion)
			if strings.EqualFold(in.ProtocolBinding, "JSONRPC") && v != "" {
				return ep, pick(in.URL, v, in.ProtocolVersion, in.Tenant)
			}
			offered = append(offered, fmt.Sprintf("%s %s at %s", in.ProtocolBinding, orUnset(in.ProtocolVersion), in.URL))
		}
	} else if c.URL != "" {
		preferred := c.PreferredTransport
		if preferred == "" {
			preferred = "JSONRPC"
		}
		if strings.EqualFold(preferred, "JSONRPC") {
			return ep, pick(c.URL, a2aV03, c.ProtocolVersion, "")
		}
		offered = append(offered, fmt.Sprintf("%s at %s", preferred, c.URL))
		for _, in := range c.AdditionalInterfaces {
			if strings.EqualFold(in.Transport, "JSONRPC") {
				return ep, pick(in.URL, a2aV03, c.ProtocolVersion, "")
			}
			offered = append(offered, fmt.Sprintf("%s at %s", in.Transport, in.URL))
		}
	}
	if len(offered) == 0 {
		return nil, fmt.Errorf("it declares no interface (neither supportedInterfaces nor url)")
	}
	return nil, fmt.Errorf("it offers no JSON-RPC interface in A2A 1.0 or 0.3, only %s; agenteval speaks A2A over JSON-RPC: serve that binding too", strings.Join(offered, ", "))
}

// wireVersion maps an interface's protocolVersion onto the wire form
// spoken for it, or "" for a version not spoken here. An empty version is
// 0.3, as the spec says of a request without A2A-Version.
func wireVersion(v string) string {
	switch {
	case v == "" || strings.HasPrefix(v, "0.3") || strings.HasPrefix(v, "0.2"):
		return a2aV03
	case v == "1" || strings.HasPrefix(v, "1."):
		return a2aV10
	}
	return ""
}

// majorMinor cuts a version to Major.Minor, as A2A-Version carries it
// (0.3.0 is 0.3).
func majorMinor(v string) string {
	parts := strings.SplitN(strings.TrimSpace(v), ".", 3)
	if len(parts) > 2 {
		parts = parts[:2]
	}
	return strings.Join(parts, ".")
}

func orUnset(s string) string {
	if s == "" {
		return "(no version)"
	}
	return s
}

// a2aScheme is one security scheme of a card, in either form.
type a2aScheme struct {
	name string
	kind string // apiKey, http, oauth2, openIdConnect, mutualTLS
	in   string // apiKey: header, query or cookie
	key  string // apiKey: the header, parameter or cookie name
	http string // http: the scheme (Bearer, Basic)
}

// parseScheme reads a scheme in 0.3's form ({"type": "apiKey", "in",
// "name"}) or 1.0's ({"apiKeySecurityScheme": {"location", "name"}}).
func parseScheme(name string, raw json.RawMessage) a2aScheme {
	var s struct {
		Type string `json:"type"`
		In   string `json:"in"`
		Name string `json:"name"`
		// Scheme is 0.3's HTTP auth scheme (a string), or the oneof
		// @a2a-js/sdk 1.x serves (an object).
		Scheme json.RawMessage `json:"scheme"`

		APIKey *struct {
			Location string `json:"location"`
			Name     string `json:"name"`
		} `json:"apiKeySecurityScheme"`
		HTTPAuth *struct {
			Scheme string `json:"scheme"`
		} `json:"httpAuthSecurityScheme"`
		OAuth2 json.RawMessage `json:"oauth2SecurityScheme"`
		OIDC   json.RawMessage `json:"openIdConnectSecurityScheme"`
		MTLS   json.RawMessage `json:"mtlsSecurityScheme"`
	}
	_ = json.Unmarshal(raw, &s)
	// @a2a-js/sdk 1.x serves its card object as it holds it in memory,
	// where a oneof is {"scheme": {"$case": ..., "value": ...}}.
	var oneOf struct {
		Case  string          `json:"$case"`
		Value json.RawMessage `json:"value"`
	}
	if json.Unmarshal(s.Scheme, &oneOf) == nil && oneOf.Case != "" {
		wrapped, _ := json.Marshal(map[string]json.RawMessage{oneOf.Case: oneOf.Value})
		return parseScheme(name, wrapped)
	}
	var httpScheme string
	_ = json.Unmarshal(s.Scheme, &httpScheme)
	out := a2aScheme{name: name}
	switch {
	case s.APIKey != nil:
		out.kind, out.in, out.key = "apiKey", s.APIKey.Location, s.APIKey.Name
	case s.HTTPAuth != nil:
		out.kind, out.http = "http", s.HTTPAuth.Scheme
	case s.OAuth2 != nil:
		out.kind = "oauth2"
	case s.OIDC != nil:
		out.kind = "openIdConnect"
	case s.MTLS != nil:
		out.kind = "mutualTLS"
	default:
		out.kind, out.in, out.key, out.http = s.Type, s.In, s.Name, httpScheme
	}
	if out.kind == "apiKey" && out.in == "" {
		out.in = "header"
	}
	return out
}

// satisfied reports whether the configured headers (or the URL, for an
// API key in the query) carry the credential a scheme asks for.
func (s a2aScheme) satisfied(headers map[string]string, rpcURL string) bool {
	has := func(name string) bool {
		for k, v := range headers {
			if strings.EqualFold(k, name) && strings.TrimSpace(v) != "" {
				return true
			}
		}
		return false
	}
	switch strings.ToLower(s.kind) {
	case "apikey":
		switch strings.ToLower(s.in) {
		case "query":
			u, err := url.Parse(rpcURL)
			return err == nil && u.Query().Has(s.key)
		case "cookie":
			return has("Cookie")
		}
		return has(s.key)
	case "http", "oauth2", "openidconnect":
		return has("Authorization")
	}
	return false
}

// advice says how to give a scheme its credential.
func (s a2aScheme) advice() string {
	switch strings.ToLower(s.kind) {
	case "apikey":
		switch strings.ToLower(s.in) {
		case "query":
			return fmt.Sprintf("an API key in the query parameter %q: add it to the target's url", s.key)
		case "cookie":
			return fmt.Sprintf("an API key in the cookie %q: set headers: {Cookie: \"%s=${{ A2A_API_KEY }}\"} in the target's a2a block", s.key, s.key)
		}
		return fmt.Sprintf("an API key in the header %q: set headers: {%s: \"${{ A2A_API_KEY }}\"} in the target's a2a block", s.key, s.key)
	case "http":
		scheme := s.http
		if scheme == "" {
			scheme = "Bearer"
		}
		// The header's scheme word is capitalized as RFC 9110 examples
		// write it; servers compare it case-insensitively.
		word := strings.ToUpper(scheme[:1]) + strings.ToLower(scheme[1:])
		return fmt.Sprintf("HTTP %s authentication: set headers: {Authorization: \"%s ${{ A2A_TOKEN }}\"} in the target's a2a block", word, word)
	case "oauth2", "openidconnect":
		return fmt.Sprintf("an %s access token: get one out of band and set headers: {Authorization: \"Bearer ${{ A2A_TOKEN }}\"} in the target's a2a block", s.kind)
	case "mutualtls":
		return "mutual TLS, which agenteval's a2a target does not do"
	}
	return fmt.Sprintf("a %q credential agenteval does not know", s.kind)
}

// requirements lists the card's alternatives: each is a set of schemes
// that must all be met. With schemes but no requirements, any one scheme
// is an alternative.
func (c *wireCard) requirements() [][]string {
	var alts [][]string
	for _, r := range c.SecurityRequirements {
		alts = append(alts, sortedKeys(r.Schemes))
	}
	for _, r := range c.Security {
		alts = append(alts, sortedKeys(r))
	}
	if len(alts) == 0 {
		for _, name := range sortedKeys(c.SecuritySchemes) {
			alts = append(alts, []string{name})
		}
	}
	return alts
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkSecurity fails when the card requires credentials that no
// configured header carries, saying which scheme and which header to set.
// An empty requirement ({}) means no credential is needed.
func (c *wireCard) checkSecurity(headers map[string]string, rpcURL string) error {
	alts := c.requirements()
	if len(alts) == 0 {
		return nil
	}
	var firstMissing *a2aScheme
	for _, alt := range alts {
		ok := true
		for _, name := range alt {
			s := parseScheme(name, c.SecuritySchemes[name])
			if !s.satisfied(headers, rpcURL) {
				ok = false
				if firstMissing == nil {
					firstMissing = &s
				}
				break
			}
		}
		if ok {
			return nil
		}
	}
	return fmt.Errorf("requires the security scheme %q, %s", firstMissing.name, firstMissing.advice())
}

// noteSecrets registers the values of the headers the card's API-key
// schemes name, whatever those names are: they are credentials even when
// their names do not say so.
func (c *wireCard) noteSecrets(headers map[string]string) {
	for name, raw := range c.SecuritySchemes {
		s := parseScheme(name, raw)
		if !strings.EqualFold(s.kind, "apiKey") {
			continue
		}
		for k, v := range headers {
			if strings.EqualFold(k, s.key) {
				redact.Add(v)
			}
		}
	}
}
