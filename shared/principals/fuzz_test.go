package principals_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"tunnelapi/shared/app"
	"tunnelapi/shared/testkit"
)

// FuzzRequests sends arbitrary bodies, paths and queries to every principals route on the real
// stack: no input may produce a 5xx, and every error must be a well-formed envelope.
func FuzzRequests(f *testing.F) {
	seeds := []struct {
		route       uint8
		suffix      string
		query, body string
	}{
		{0, "", "", `{"description":"x","metadata":"y"}`},
		{1, "", "limit=5", ``},
		{2, "", "", `{"acl":["bind:*.a.com","bind:k=v"]}`},
		{3, "", "", `{"acl":["bind:"]}`},
		{4, "", "", `{"name":"bot","active":false}`},
		{5, "x", "", `{"description":null}`},
		{6, "", "before_id=ak_0000000000000000000000000", ``},
		{7, "%00", "limit=1e9", `{"owner_id":"usr_x"}`},
		{0, "", "", `{"owner_id":"bot_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc"}`},
		{2, "", "", `{"acl":[1,2]}`},
	}
	for _, s := range seeds {
		f.Add(s.route, s.suffix, s.query, s.body)
	}
	routes := []struct{ method, path string }{
		{"POST", "/api_keys"}, {"GET", "/api_keys"}, {"POST", "/credentials"}, {"PATCH", "/credentials/"},
		{"POST", "/bot_users"}, {"PATCH", "/api_keys/"}, {"GET", "/credentials"}, {"DELETE", "/bot_users/"},
	}
	var s *testkit.Stack
	var a *testkit.Account
	f.Fuzz(func(t *testing.T, route uint8, suffix, query, body string) {
		if s == nil {
			s = testkit.Shared(t, app.Registers()...)
			a = s.NewAccount(t)
		}
		r := routes[int(route)%len(routes)]
		path := r.path + url.PathEscape(suffix)
		if query != "" {
			path += "?" + requestLineSafe(query)
		}
		var b any
		if r.method != "GET" && r.method != "DELETE" {
			b = body
		}
		res := a.Do(t, r.method, path, b)
		if res.Status >= 500 {
			t.Fatalf("%s %s %q: %d %s", r.method, path, body, res.Status, res.Body)
		}
		if res.Status >= 400 {
			var env struct {
				StatusCode *int              `json:"status_code"`
				Msg        *string           `json:"msg"`
				Details    map[string]string `json:"details"`
			}
			if err := json.Unmarshal(res.Body, &env); err != nil || env.StatusCode == nil || *env.StatusCode != res.Status || env.Msg == nil || env.Details["operation_id"] == "" {
				t.Fatalf("malformed error envelope for %s %s: %s", r.method, path, res.Body)
			}
		}
	})
}

// requestLineSafe percent-encodes only what cannot appear in an HTTP request line at all (the Go
// server would refuse it before any handler runs), leaving malformed escapes and odd
// parameters for the handler to judge.
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
