package api_test

import (
	"fmt"
	"strings"
	"testing"

	"tunnelapi/shared/testing/testkit"
)

// FuzzAllRoutes sends arbitrary path values, query strings and bodies to every route of every
// family on the real stack, with or without request tricks: no input may produce a 5xx, and
// every error is a well-formed envelope whose status_code matches the response and whose
// details carry the operation id. The campaign's inputs are seeds, each checked for its own
// answer.
func FuzzAllRoutes(f *testing.F) {
	routes := testkit.AppRoutes()
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
	parent := testkit.UniqueName("campaign", "example.com")
	for _, c := range campaign(parent) {
		if c.needs != "" {
			continue // its path value is a resource the table test creates first
		}
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
			s = testkit.App(t)
			a = s.NewAccount(t)
			a.ReserveWildcardOver(t, parent)
		}
		r := int(route) % len(routes)
		res := send(t, a, routes[r], pathValue, query, body, trick)
		if c, ok := expect[input{r, pathValue, query, body, trick}]; ok {
			t.Logf("campaign input: %s", c.name)
			c.check(t, a, res)
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
