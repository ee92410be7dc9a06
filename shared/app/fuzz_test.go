package app_test

import (
	"encoding/json"
	"fmt"
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

// FuzzAllRoutes sends arbitrary path values, query strings and bodies to every route of every
// family on the real stack: no input may produce a 5xx, and every error is a well-formed
// envelope whose status_code matches the response and whose details carry the operation id.
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
		f.Add(uint16(i), "ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc", "", bodies[i%len(bodies)])
	}
	f.Add(uint16(0), "%00", "limit=1e9&before_id=x", `{"description":null}`)
	f.Add(uint16(1), strings.Repeat("a", 3000), "filter=obj.x%5B0%5D", `{"owner_id":"usr_x"}`)
	// Path ids repeated in bodies, beforeId, and what strict JSON refuses.
	f.Add(uint16(3), "ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc", "beforeId=ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc&before_id=x", `{"id":"ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc","description":"d"}`)
	f.Add(uint16(4), "x", "filter=obj.id%20%3D%3D%20%22%5Cq%22", `{"id":7,"subscription_id":null,"type":"api_key_created.v0"}`)
	f.Add(uint16(5), "..", "", `{"DESCRIPTION":"x","de\u017fcription":"y"}`)
	f.Add(uint16(6), "a b", "", `{"description":"a","description":"b","metadata":"\ud800","x":"\u0000"}`)
	var s *testkit.Stack
	var a *testkit.Account
	f.Fuzz(func(t *testing.T, route uint16, pathValue, query, body string) {
		if s == nil {
			s = testkit.Shared(t, app.Families...)
			a = s.NewAccount(t)
		}
		method, pattern, _ := strings.Cut(routes[int(route)%len(routes)], " ")
		path := pattern
		for strings.Contains(path, "{") {
			i, j := strings.IndexByte(path, '{'), strings.IndexByte(path, '}')
			path = path[:i] + url.PathEscape(pathValue) + path[j+1:]
		}
		if query != "" {
			path += "?" + requestLineSafe(query)
		}
		var b any
		if method == "POST" || method == "PATCH" || method == "PUT" {
			b = body
		}
		res := a.Do(t, method, path, b)
		if res.Status >= 500 {
			t.Fatalf("%s %s %q: %d %s", method, path, body, res.Status, res.Body)
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
