package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"tunnelapi/shared/app"
	"tunnelapi/shared/testing/testkit"
)

// allRoutes is every route of every function, in a stable order.
func allRoutes() []string {
	var out []string
	for _, f := range app.Functions() {
		out = append(out, codeRoutes(f)...)
	}
	return out
}

// Request tricks FuzzAllRoutes applies beside its path value, query and body (bits of trick).
const (
	// trickTwoAuth sends the Authorization header twice.
	trickTwoAuth = 1 << iota
	// trickRawPath puts the path value into the path unescaped ("..", "/", "%2e" as they are).
	trickRawPath
)

// campaignInput is one input of the adversarial campaign the API was hardened against, with
// the answer it must get.
type campaignInput struct {
	name                   string
	route                  string // "METHOD pattern", as allRoutes lists it
	pathValue, query, body string
	trick                  uint8
	status                 int
	code, field            string // expected error_code and details.field when set
}

const someKey = "ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc"

// campaign lists the campaign's inputs, each in FuzzAllRoutes' seed corpus with its answer:
// sizes, deeply nested CEL, JSON that strict decoding refuses, non-canonical paths, two
// Authorization headers and malformed filters get their 4xx, and a large valid document is
// stored (never a 5xx).
func campaign() []campaignInput {
	nested := strings.Repeat("[", 246) + "1" + strings.Repeat("]", 246)
	celPolicy := `{"on_http_request":[{"expressions":["size(` + nested + `) > 0","size(` + nested + `) > 0"],"actions":[{"type":"deny"}]}]}`
	const row = "<p><b>&lt;</b>&amp;<i>&gt;</i></p>\n"
	page := "<html><body>\n" + strings.Repeat(row, (152<<10)/len(row)) + "</body></html>"
	htmlPolicy := `{"on_http_request":[{"actions":[{"type":"custom-response","config":{"status_code":200,"content":` + quote(page) + `}}]}]}`
	rules := make([]string, 20000)
	for i := range rules {
		rules[i] = fmt.Sprintf("bind:host-%05d.example.com", i)
	}
	policyIDs := make([]string, 29000)
	for i := range policyIDs {
		policyIDs[i] = "ipp_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc"
	}
	return []campaignInput{
		{name: "nested CEL lists", route: "POST /endpoints", body: `{"url":"https://cel.example.com","traffic_policy":` + quote(celPolicy) + `}`,
			status: 400, field: "traffic_policy"},
		{name: "152 KB HTML custom response", route: "POST /endpoints", body: `{"url":"https://html.example.com","traffic_policy":` + quote(htmlPolicy) + `}`,
			status: 201},
		{name: "20,000 ACL rules", route: "POST /credentials", body: `{"acl":` + marshal(rules) + `}`, status: 400, code: "ERR_NGROK_215", field: "acl"},
		{name: "29,000 ip_policy_ids", route: "POST /ip_restrictions", body: `{"type":"dashboard","ip_policy_ids":` + marshal(policyIDs) + `}`,
			status: 400, field: "ip_policy_ids"},
		{name: "member name in capitals", route: "POST /api_keys", body: `{"DESCRIPTION":"x"}`, status: 400, code: "ERR_NGROK_214", field: "DESCRIPTION"},
		{name: "member name by Unicode folding", route: "POST /api_keys", body: `{"de\u017fcription":"x"}`,
			status: 400, code: "ERR_NGROK_214", field: "deſcription"},
		{name: "duplicate members", route: "POST /credentials", body: `{"description":"a","description":"b"}`, status: 400, code: "ERR_NGROK_213", field: "description"},
		{name: "NUL in a string", route: "POST /bot_users", body: `{"name":"a\u0000b"}`, status: 400, code: "ERR_NGROK_215", field: "name"},
		{name: "lone surrogate", route: "POST /ip_policies", body: `{"description":"\ud800"}`, status: 400, code: "ERR_NGROK_213", field: "description"},
		{name: "dot-dot path", route: "DELETE /credentials/{id}", pathValue: "../api_keys/" + someKey, trick: trickRawPath, status: 404},
		{name: "empty path segment", route: "GET /api_keys/{id}", pathValue: "/" + someKey, trick: trickRawPath, status: 404},
		{name: "encoded dot-dot", route: "GET /endpoints/{id}", pathValue: "%2e%2e", trick: trickRawPath, status: 404},
		{name: "two Authorization headers", route: "GET /api_keys", trick: trickTwoAuth, status: 400, code: "ERR_NGROK_201", field: "Authorization"},
		{name: "filter with an invalid escape", route: "GET /credentials", query: `filter=obj.description%20%3D%3D%20%22%5Cq%22`,
			status: 400, code: "ERR_NGROK_250", field: "filter"},
		{name: "filter with invalid UTF-8", route: "GET /credentials", query: `filter=obj.description%20%3D%3D%20%22%FF%22`,
			status: 400, code: "ERR_NGROK_250", field: "filter"},
		{name: "filter with a malformed number", route: "GET /credentials", query: `filter=obj.created_at%20%3D%3D%201.2.3`,
			status: 400, code: "ERR_NGROK_250", field: "filter"},
	}
}

func quote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// FuzzAllRoutes sends arbitrary path values, query strings and bodies to every route of every
// family on the real stack, with or without request tricks: no input may produce a 5xx, and
// every error is a well-formed envelope whose status_code matches the response and whose
// details carry the operation id. The campaign's inputs are seeds, each checked for its own
// answer.
func FuzzAllRoutes(f *testing.F) {
	routes := allRoutes()
	bodies := []string{`{}`, `{"description":"x","metadata":"y"}`, `{"acl":["bind:*.a.com"]}`, `[`, `null`,
		`{"cidr":"10.0.0.0/8","action":"deny","ip_policy_id":"ipp_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc"}`,
		`{"url":"https://a.example.com","traffic_policy":"on_http_request: []"}`,
		`{"target":{"kinesis":{"auth":{"role":{"role_arn":"x"}},"stream_arn":"y"}}}`,
		`{"private_key_type":"rsa","key_size":1024}`, `{"public_key":"ssh-ed25519 AAAA"}`,
		`{"certificate_pem":"-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----"}`,
		`{"sources":[{"type":"nope.v0"}],"destination_ids":["ed_x"]}`, `{"labels":{"a=b":"c"}}`,
		`{"address":"[::1]:0","tls":{"enabled":true}}`, `{"headers":{"X-A":"b\r\n"},"status_code":1e3,"body":""}`,
		`{"backends":["bkdtg_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc","bkdwd_x",7]}`, `{"backends":{"bkdfo_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc":-1}}`}
	for i := range routes {
		f.Add(uint16(i), someKey, "", bodies[i%len(bodies)], uint8(0))
	}
	f.Add(uint16(0), "%00", "limit=1e9&before_id=x", `{"description":null}`, uint8(0))
	f.Add(uint16(1), strings.Repeat("a", 3000), "filter=obj.x%5B0%5D", `{"owner_id":"usr_x"}`, uint8(0))
	// Path ids repeated in bodies, beforeId, and what strict JSON refuses.
	f.Add(uint16(3), someKey, "beforeId="+someKey+"&before_id=x", `{"id":"`+someKey+`","description":"d"}`, uint8(0))
	f.Add(uint16(4), "x", "filter=obj.id%20%3D%3D%20%22%5Cq%22", `{"id":7,"subscription_id":null,"type":"api_key_created.v0"}`, uint8(0))
	f.Add(uint16(5), "..", "", `{"DESCRIPTION":"x","de\u017fcription":"y"}`, uint8(0))
	f.Add(uint16(6), "a b", "", `{"description":"a","description":"b","metadata":"\ud800","x":"\u0000"}`, uint8(0))
	f.Add(uint16(7), "a/../b%2F", "", `{}`, uint8(trickTwoAuth|trickRawPath))
	index := map[string]int{}
	for i, r := range routes {
		index[r] = i
	}
	type input struct {
		route                  int
		pathValue, query, body string
		trick                  uint8
	}
	expect := map[input]campaignInput{}
	for _, c := range campaign() {
		i, ok := index[c.route]
		if !ok {
			f.Fatalf("campaign input %q: no route %q", c.name, c.route)
		}
		f.Add(uint16(i), c.pathValue, c.query, c.body, c.trick)
		expect[input{i, c.pathValue, c.query, c.body, c.trick}] = c
	}
	var s *testkit.Stack
	var a *testkit.Account
	f.Fuzz(func(t *testing.T, route uint16, pathValue, query, body string, trick uint8) {
		if s == nil {
			s = testkit.Shared(t, app.Families...)
			a = s.NewAccount(t)
		}
		r := int(route) % len(routes)
		method, pattern, _ := strings.Cut(routes[r], " ")
		value := url.PathEscape(pathValue)
		if trick&trickRawPath != 0 {
			value = pathSafe(pathValue)
		}
		path := pattern
		for strings.Contains(path, "{") {
			i, j := strings.IndexByte(path, '{'), strings.IndexByte(path, '}')
			path = path[:i] + value + path[j+1:]
		}
		if query != "" {
			path += "?" + requestLineSafe(query)
		}
		var b any
		if method == "POST" || method == "PATCH" || method == "PUT" {
			b = body
		}
		var headers http.Header
		if trick&trickTwoAuth != 0 {
			headers = http.Header{"Authorization": {"Bearer " + a.Token, "Bearer " + a.Token}}
		}
		res := a.DoWith(t, method, path, headers, b)
		if res.Status >= 500 {
			t.Fatalf("%s %s %.300q: %d %s", method, path, body, res.Status, res.Body)
		}
		if res.Status >= 400 {
			var env struct {
				StatusCode *int              `json:"status_code"`
				Msg        *string           `json:"msg"`
				Details    map[string]string `json:"details"`
			}
			if err := json.Unmarshal(res.Body, &env); err != nil || env.StatusCode == nil || *env.StatusCode != res.Status ||
				env.Msg == nil || env.Details["operation_id"] != res.Header.Get("Ngrok-Operation-Id") {
				t.Fatalf("malformed error envelope for %s %s: %s", method, path, res.Body)
			}
		}
		if c, ok := expect[input{r, pathValue, query, body, trick}]; ok {
			t.Logf("campaign input: %s", c.name)
			if c.status >= 400 {
				res.ExpectError(t, c.status, c.code, c.field)
				return
			}
			// A valid input is stored; removing it lets the seed run again (fuzzing does).
			created := res.Expect(t, c.status)
			a.Do(t, "DELETE", pattern+"/"+created["id"].(string), nil).Expect(t, http.StatusNoContent)
		}
	})
}

// requestLineSafe percent-encodes only what cannot appear in an HTTP request line at all (the Go
// server would refuse it before any handler runs), leaving malformed escapes and odd
// parameters for the handlers to judge.
func requestLineSafe(q string) string {
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c <= 0x20 || c >= 0x7f || c == '#' {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// pathSafe keeps what a URL path may hold as it is (slashes, dots, well-formed percent escapes)
// and percent-encodes the rest, so a raw path value reaches the server as sent.
func pathSafe(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]):
			b.WriteByte(c)
		case c > 0x20 && c < 0x7f && !strings.ContainsRune("%?#\"<>\\^`{|}", rune(c)):
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
