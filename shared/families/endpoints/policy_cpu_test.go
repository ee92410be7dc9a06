package endpoints_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/rules/trafficpolicy/policytest"
	"tunnelapi/shared/testing/testkit"
)

// Every route that takes a traffic policy (POST and PATCH /endpoints) accepts or refuses each
// adversarial document within the CPU bound, measured as the process's CPU time around the
// request (the least of three, policytest.LeastCPU), and never with a 5xx.
func TestPolicyRoutesAreBounded(t *testing.T) {
	s, a := testkit.AppAccount(t)
	parent, _ := a.ReserveWildcard(t)
	e := a.Do(t, "POST", "/endpoints", map[string]any{"url": "https://bounded." + parent, "traffic_policy": policy}).Expect(t, 201)
	path := "/endpoints/" + e["id"].(string)
	cases := policytest.Cases()
	// A body at the 1 MiB cap: the document itself is over its own limit.
	cases = append(cases, policytest.Case{Name: "a policy filling the 1 MiB body", Doc: "on_http_request: []\n#" + strings.Repeat("x", 1<<20-200)})
	s.DoFrom(t, "203.0.113.7", "PATCH", path, a.Token, map[string]any{"traffic_policy": policy}) // warm, as a running function is
	var worst time.Duration
	for i, c := range cases {
		for _, method := range []string{"POST", "PATCH"} {
			var status int
			took := policytest.LeastCPU(3, func(try int) {
				body := map[string]any{"traffic_policy": c.Doc}
				p := path
				if method == "POST" {
					p, body["url"] = "/endpoints", fmt.Sprintf("https://bounded-%d-%d.%s", i, try, parent)
				}
				status = s.DoFrom(t, "203.0.113.7", method, p, a.Token, body).Status
			})
			t.Logf("%-5s %-50s %7d bytes  %3d  %6.1f ms CPU", method, c.Name, len(c.Doc), status, float64(took.Microseconds())/1000)
			worst = max(worst, took)
			if took > policytest.MaxCPU {
				t.Errorf("%s %s: %v of CPU, over %v", method, c.Name, took, policytest.MaxCPU)
			}
			if status >= 500 || (status != 200 && status != 201 && status != 400 && status != 413) {
				t.Errorf("%s %s: status %d", method, c.Name, status)
			}
		}
	}
	t.Logf("worst: %v of CPU per request (bound %v)", worst, policytest.MaxCPU)
}

// FuzzPolicyRoutes sends fuzzed documents through both routes: never a 5xx, never over the
// CPU bound.
func FuzzPolicyRoutes(f *testing.F) {
	// Small seeds: the engine minimises every new input, a request at a time.
	f.Add(policy)
	f.Add("on_http_request:\n  - expressions: ['size([[[[1]]]]) > 0']\n    actions: [{type: custom-response, config: {body: '${req.url.path}'}}]\n")
	f.Add(`{"on_tcp_connect":[{"actions":[{"type":"restrict-ips","config":{"allow":["10.0.0.0/8"]}}]}]}`)
	f.Add("a: &a [x, x]\nb: [*a, *a]\n")
	var s *testkit.Stack
	var a *testkit.Account
	var patch, parent string
	f.Fuzz(func(t *testing.T, doc string) {
		if s == nil {
			s = testkit.App(t)
			a = s.NewAccount(t)
			parent, _ = a.ReserveWildcard(t)
			e := a.Do(t, "POST", "/endpoints", map[string]any{"url": "https://fuzz-patched." + parent, "traffic_policy": policy}).Expect(t, 201)
			patch = "/endpoints/" + e["id"].(string)
			s.DoFrom(t, "203.0.113.7", "PATCH", patch, a.Token, map[string]any{"traffic_policy": policy}) // warm
		}
		for _, method := range []string{"POST", "PATCH"} {
			p, body := "/endpoints", map[string]any{"traffic_policy": doc, "url": "https://fuzz." + parent}
			if method == "PATCH" {
				p, body = patch, map[string]any{"traffic_policy": doc}
			}
			start := policytest.CPU()
			res := a.Do(t, method, p, body)
			took := policytest.CPU() - start
			if took > policytest.MaxCPU {
				t.Fatalf("%s: %v of CPU for %q", method, took, doc)
			}
			if res.Status >= 500 {
				t.Fatalf("%s: status %d for %q: %s", method, res.Status, doc, res.Body)
			}
			if res.Status == 201 {
				id := res.JSON(t)["id"].(string)
				a.Do(t, "DELETE", "/endpoints/"+id, nil)
			}
		}
	})
}
