package backends_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"tunnelapi/shared/families/backends"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/testing/testkit"
)

// newBackend creates a backend of the collection path with body and returns its id.
func newBackend(t *testing.T, a *testkit.Account, path string, body any) string {
	t.Helper()
	return a.Do(t, "POST", path, body).Expect(t, http.StatusCreated)["id"].(string)
}

func TestStaticBackendsConformance(t *testing.T) {
	s := testkit.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: backends.StaticBackendsDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			return map[string]any{"description": "origin", "address": fmt.Sprintf("origin-%d.example.com:443", n)}
		},
		Update:      map[string]any{"address": "10.0.0.1:8080", "tls": map[string]any{"enabled": true}},
		UpdateWants: map[string]any{"address": "10.0.0.1:8080", "tls": map[string]any{"enabled": true}, "description": "origin"},
	})
}

func TestHTTPResponseBackendsConformance(t *testing.T) {
	s := testkit.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: backends.HTTPResponseBackendsDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			return map[string]any{"body": fmt.Sprintf("page %d", n), "status_code": 503}
		},
		Update:      map[string]any{"headers": map[string]string{"Content-Type": "text/plain"}, "status_code": 200},
		UpdateWants: map[string]any{"headers": map[string]any{"content-type": "text/plain"}, "status_code": 200, "body": "page 0"},
	})
}

func TestFailoverBackendsConformance(t *testing.T) {
	s := testkit.App(t)
	var first, second string
	s.Conformance(t, testkit.FamilySpec{
		Family: backends.FailoverBackendsDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			first = newBackend(t, a, "/backends/static", map[string]any{"address": "a.example.com:443"})
			second = newBackend(t, a, "/backends/http_response", map[string]any{})
			return map[string]any{"description": "primary", "backends": []string{first, second}}
		},
		Update:      map[string]any{"metadata": "m"},
		UpdateWants: map[string]any{"metadata": "m", "description": "primary"},
	})
}

func TestWeightedBackendsConformance(t *testing.T) {
	s := testkit.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: backends.WeightedBackendsDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			b := newBackend(t, a, "/backends/tunnel_group", map[string]any{})
			return map[string]any{"description": "canary", "backends": map[string]int{b: 100}}
		},
		Update:      map[string]any{"metadata": "m"},
		UpdateWants: map[string]any{"metadata": "m", "description": "canary"},
	})
}

// refusal is a bad create and PATCH body and the error it gets.
type refusal struct {
	name  string
	body  any
	code  string
	field string
}

// checkRefusals sends each bad body as a create and as a PATCH of path: each gets its code
// naming its field, no backend is created and the backend at path is unchanged.
func checkRefusals(t *testing.T, a *testkit.Account, collection, path string, cases []refusal) {
	t.Helper()
	before := a.Do(t, "GET", path, nil).Expect(t, http.StatusOK)
	listed, _ := a.WalkPages(t, collection, "backends")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a.Do(t, "POST", collection, c.body).ExpectError(t, http.StatusBadRequest, c.code, c.field)
			a.Do(t, "PATCH", path, c.body).ExpectError(t, http.StatusBadRequest, c.code, c.field)
		})
	}
	after := a.Do(t, "GET", path, nil).Expect(t, http.StatusOK)
	if b, _ := json.Marshal(before); !jsonEqual(b, after) {
		t.Fatalf("refused input changed the backend:\n%v\n%v", before, after)
	}
	if now, _ := a.WalkPages(t, collection, "backends"); len(now) != len(listed) {
		t.Fatalf("%d backends before the refused creates, %d after", len(listed), len(now))
	}
}

func jsonEqual(b []byte, v map[string]any) bool {
	c, _ := json.Marshal(v)
	return string(b) == string(c)
}

func TestStaticBackendFields(t *testing.T) {
	_, a := testkit.AppAccount(t)
	for _, ok := range []string{"example.com:80", "10.0.0.1:65535", "[2001:db8::1]:443", "my_host.internal:1", "localhost:8080", "a.b.c.:9"} {
		got := a.Do(t, "POST", "/backends/static", map[string]any{"address": ok}).Expect(t, http.StatusCreated)
		if got["address"] != ok || got["tls"].(map[string]any)["enabled"] != false {
			t.Fatalf("created %v", got)
		}
	}
	id := newBackend(t, a, "/backends/static", map[string]any{"address": "origin.example.com:443", "tls": map[string]any{"enabled": true}, "description": "d", "metadata": "m"})
	path := "/backends/static/" + id
	if got := a.Do(t, "PATCH", path, map[string]any{"description": "e"}).Expect(t, http.StatusOK); got["address"] != "origin.example.com:443" || got["tls"].(map[string]any)["enabled"] != true {
		t.Fatalf("PATCH of the description changed other members: %v", got)
	}
	checkRefusals(t, a, "/backends/static", path, []refusal{
		{"no port", map[string]any{"address": "example.com"}, backends.CodeNotHostPort, "address"},
		{"empty", map[string]any{"address": ""}, backends.CodeNotHostPort, "address"},
		{"bare ipv6", map[string]any{"address": "2001:db8::1:443"}, backends.CodeNotHostPort, "address"},
		{"no host", map[string]any{"address": ":443"}, backends.CodeNoHost, "address"},
		{"port zero", map[string]any{"address": "example.com:0"}, backends.CodeBadAddress, "address"},
		{"port too big", map[string]any{"address": "example.com:65536"}, backends.CodeBadAddress, "address"},
		{"port name", map[string]any{"address": "example.com:https"}, backends.CodeBadAddress, "address"},
		{"port padded", map[string]any{"address": "example.com:0443"}, backends.CodeBadAddress, "address"},
		{"empty port", map[string]any{"address": "example.com:"}, backends.CodeBadAddress, "address"},
		{"bad host", map[string]any{"address": "exa mple.com:80"}, backends.CodeBadAddress, "address"},
		{"hyphen label", map[string]any{"address": "-a.example.com:80"}, backends.CodeBadAddress, "address"},
		{"empty label", map[string]any{"address": "a..example.com:80"}, backends.CodeBadAddress, "address"},
		{"bracketed name", map[string]any{"address": "[example.com]:80"}, backends.CodeBadAddress, "address"},
		{"bracketed ipv4", map[string]any{"address": "[10.0.0.1]:80"}, backends.CodeBadAddress, "address"},
		{"zone", map[string]any{"address": "[fe80::1%eth0]:80"}, backends.CodeBadAddress, "address"},
		{"too long", map[string]any{"address": strings.Repeat("a", backends.MaxAddressBytes) + ":80"}, backends.CodeBadAddress, "address"},
		{"not a string", map[string]any{"address": 80}, "ERR_NGROK_215", "address"},
		{"tls not an object", map[string]any{"address": "a.example.com:1", "tls": true}, "ERR_NGROK_215", "tls"},
		{"tls unknown member", map[string]any{"address": "a.example.com:1", "tls": map[string]any{"verify": true}}, "ERR_NGROK_214", "tls.verify"},
		{"description", map[string]any{"address": "a.example.com:1", "description": strings.Repeat("d", 256)}, backends.CodeDescription, "description"},
		{"metadata", map[string]any{"address": "a.example.com:1", "metadata": strings.Repeat("m", 4097)}, backends.CodeMetadata, "metadata"},
	})
	a.Do(t, "POST", "/backends/static", map[string]any{}).ExpectError(t, http.StatusBadRequest, backends.CodeNotHostPort, "address")
	a.Do(t, "PATCH", path, map[string]any{}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_606", "body")
}

func TestHTTPResponseBackendFields(t *testing.T) {
	_, a := testkit.AppAccount(t)
	got := a.Do(t, "POST", "/backends/http_response", map[string]any{}).Expect(t, http.StatusCreated)
	if got["status_code"] != float64(200) || got["body"] != "" || len(got["headers"].(map[string]any)) != 0 {
		t.Fatalf("defaults: %v", got)
	}
	full := map[string]any{"body": strings.Repeat("b", backends.MaxResponseBodyBytes), "status_code": 599,
		"headers": map[string]string{strings.Repeat("n", backends.MaxHeaderNameBytes): strings.Repeat("v", backends.MaxHeaderValueBytes), "X-Empty": ""}}
	id := newBackend(t, a, "/backends/http_response", full)
	path := "/backends/http_response/" + id
	a.Do(t, "PATCH", path, map[string]any{"status_code": 100, "body": "", "headers": map[string]string{"Location": "https://example.com/"}}).Expect(t, http.StatusOK)
	tooMany := map[string]string{}
	for i := range backends.MaxHeaders + 1 {
		tooMany[fmt.Sprintf("X-H%d", i)] = "v"
	}
	checkRefusals(t, a, "/backends/http_response", path, []refusal{
		{"body too long", map[string]any{"body": strings.Repeat("b", backends.MaxResponseBodyBytes+1)}, backends.CodeBodyTooLarge, "body"},
		{"status 99", map[string]any{"status_code": 99}, backends.CodeStatusCode, "status_code"},
		{"status 600", map[string]any{"status_code": 600}, backends.CodeStatusCode, "status_code"},
		{"status negative", map[string]any{"status_code": -200}, backends.CodeStatusCode, "status_code"},
		{"status fraction", map[string]any{"status_code": 200.5}, "ERR_NGROK_215", "status_code"},
		{"status huge", map[string]any{"status_code": 1e30}, "ERR_NGROK_215", "status_code"},
		{"header name too long", map[string]any{"headers": map[string]string{strings.Repeat("n", backends.MaxHeaderNameBytes+1): "v"}}, backends.CodeHeaderName, "headers"},
		{"header value too long", map[string]any{"headers": map[string]string{"X-A": strings.Repeat("v", backends.MaxHeaderValueBytes+1)}}, backends.CodeHeaderValue, "headers"},
		{"header name invalid", map[string]any{"headers": map[string]string{"X A": "v"}}, "ERR_NGROK_215", "headers"},
		{"header name empty", map[string]any{"headers": map[string]string{"": "v"}}, "ERR_NGROK_215", "headers"},
		{"header value newline", map[string]any{"headers": map[string]string{"X-A": "a\r\nSet-Cookie: x"}}, "ERR_NGROK_215", "headers"},
		{"header twice", map[string]any{"headers": map[string]string{"X-A": "1", "x-a": "2"}}, "ERR_NGROK_215", "headers"},
		{"too many headers", map[string]any{"headers": tooMany}, "ERR_NGROK_215", "headers"},
		{"header not a string", map[string]any{"headers": map[string]any{"X-A": 1}}, "ERR_NGROK_215", "headers.X-A"},
		{"description", map[string]any{"description": strings.Repeat("d", 256)}, backends.CodeDescription, "description"},
	})
	a.Do(t, "PATCH", path, map[string]any{}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_606", "body")
}

// Failover and weighted backends accept every other kind, keep their order or weights, and
// refuse what their rules name, changing nothing.
func TestCompositeBackendFields(t *testing.T) {
	s, a := testkit.AppAccount(t)
	tg := newBackend(t, a, "/backends/tunnel_group", map[string]any{})
	st := newBackend(t, a, "/backends/static", map[string]any{"address": "a.example.com:1"})
	hr := newBackend(t, a, "/backends/http_response", map[string]any{})
	w := newBackend(t, a, "/backends/weighted", map[string]any{"backends": map[string]int{st: 0, hr: backends.MaxWeight}})
	got := a.Do(t, "POST", "/backends/failover", map[string]any{"backends": []string{w, hr, st, tg}}).Expect(t, http.StatusCreated)
	f := got["id"].(string)
	if fmt.Sprint(got["backends"]) != fmt.Sprint([]any{w, hr, st, tg}) {
		t.Fatalf("failover backends %v, want the order given", got["backends"])
	}
	if got := a.Do(t, "GET", "/backends/weighted/"+w, nil).Expect(t, http.StatusOK)["backends"].(map[string]any); len(got) != 2 || got[st] != float64(0) || got[hr] != float64(backends.MaxWeight) {
		t.Fatalf("weighted backends %v", got)
	}
	w2 := newBackend(t, a, "/backends/weighted", map[string]any{"backends": map[string]int{f: 1, tg: 2}})
	if got := a.Do(t, "POST", "/backends/failover", map[string]any{}).Expect(t, http.StatusCreated); fmt.Sprint(got["backends"]) != "[]" {
		t.Fatalf("failover without backends: %v", got["backends"])
	}
	if got := a.Do(t, "POST", "/backends/weighted", map[string]any{}).Expect(t, http.StatusCreated); fmt.Sprint(got["backends"]) != "map[]" {
		t.Fatalf("weighted without backends: %v", got["backends"])
	}
	other := s.NewAccount(t)
	theirs := newBackend(t, other, "/backends/static", map[string]any{"address": "b.example.com:1"})
	many := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = newBackend(t, a, "/backends/tunnel_group", map[string]any{})
		}
		return out
	}
	most := many(backends.MaxFailoverBackends + 1)
	weights := map[string]int{}
	for _, id := range most {
		weights[id] = 1
	}
	a.Do(t, "PATCH", "/backends/failover/"+f, map[string]any{"backends": most[:backends.MaxFailoverBackends]}).Expect(t, http.StatusOK)
	a.Do(t, "PATCH", "/backends/failover/"+f, map[string]any{"backends": []string{w, hr, st, tg}}).Expect(t, http.StatusOK)
	missing := ids.New(ids.StaticBackend)
	checkRefusals(t, a, "/backends/failover", "/backends/failover/"+f, []refusal{
		{"failover child", map[string]any{"backends": []string{st, f}}, backends.CodeFailoverChild, "backends[1]"},
		{"missing child", map[string]any{"backends": []string{st, missing}}, backends.CodeMissing, "backends[1]"},
		{"missing composite child", map[string]any{"backends": []string{ids.New(ids.WeightedBackend)}}, backends.CodeMissing, "backends[0]"},
		{"other account's child", map[string]any{"backends": []string{theirs}}, backends.CodeMissing, "backends[0]"},
		{"not a backend", map[string]any{"backends": []string{ids.New(ids.IPPolicy)}}, backends.CodeNotABackend, "backends[0]"},
		{"malformed", map[string]any{"backends": []string{"bkdsc_1"}}, backends.CodeMalformedID, "backends[0]"},
		{"twice", map[string]any{"backends": []string{st, hr, st}}, "ERR_NGROK_215", "backends[2]"},
		{"too many", map[string]any{"backends": most}, backends.CodeTooManyFailover, "backends"},
		{"not a list", map[string]any{"backends": map[string]int{st: 1}}, "ERR_NGROK_215", "backends"},
		{"not strings", map[string]any{"backends": []any{1}}, "ERR_NGROK_215", "backends[0]"},
		{"metadata", map[string]any{"metadata": strings.Repeat("m", 4097)}, backends.CodeMetadata, "metadata"},
	})
	checkRefusals(t, a, "/backends/weighted", "/backends/weighted/"+w2, []refusal{
		{"weighted child", map[string]any{"backends": map[string]int{w: 1}}, backends.CodeWeightedChild, "backends." + w},
		{"missing child", map[string]any{"backends": map[string]int{missing: 1}}, backends.CodeMissing, "backends." + missing},
		{"not a backend", map[string]any{"backends": map[string]int{"nope": 1}}, backends.CodeNotABackend, "backends.nope"},
		{"weight too big", map[string]any{"backends": map[string]int{st: backends.MaxWeight + 1}}, backends.CodeWeight, "backends." + st},
		{"weight negative", map[string]any{"backends": map[string]int{st: -1}}, backends.CodeWeight, "backends." + st},
		{"weight fraction", map[string]any{"backends": map[string]any{st: 1.5}}, "ERR_NGROK_215", "backends." + st},
		{"too many", map[string]any{"backends": weights}, backends.CodeTooManyWeighted, "backends"},
		{"not a map", map[string]any{"backends": []string{st}}, "ERR_NGROK_215", "backends"},
	})
	a.Do(t, "PATCH", "/backends/weighted/"+w2, map[string]any{}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_606", "body")
	// References follow the children: a child is released when a PATCH drops it or its parent
	// is deleted, and not before.
	a.Do(t, "DELETE", "/backends/static/"+st, nil).ExpectError(t, http.StatusBadRequest, backends.CodeInUse, "id")
	a.Do(t, "PATCH", "/backends/failover/"+f, map[string]any{"backends": []string{tg}}).Expect(t, http.StatusOK)
	a.Do(t, "DELETE", "/backends/static/"+st, nil).ExpectError(t, http.StatusBadRequest, backends.CodeInUse, "id") // still weighted
	a.Do(t, "DELETE", "/backends/failover/"+f, nil).ExpectError(t, http.StatusBadRequest, backends.CodeInUse, "id")
	a.Do(t, "DELETE", "/backends/weighted/"+w2, nil).Expect(t, http.StatusNoContent)
	a.Do(t, "DELETE", "/backends/failover/"+f, nil).Expect(t, http.StatusNoContent)
	a.Do(t, "DELETE", "/backends/weighted/"+w, nil).Expect(t, http.StatusNoContent)
	a.Do(t, "DELETE", "/backends/static/"+st, nil).Expect(t, http.StatusNoContent)
	a.Do(t, "DELETE", "/backends/tunnel_group/"+tg, nil).Expect(t, http.StatusNoContent)
	checkReferences(t, s, a)
}

// A failover or weighted backend never references itself or closes a cycle, however long.
func TestNoReferenceCycles(t *testing.T) {
	s, a := testkit.AppAccount(t)
	f1 := newBackend(t, a, "/backends/failover", map[string]any{})
	w1 := newBackend(t, a, "/backends/weighted", map[string]any{"backends": map[string]int{f1: 1}})
	f2 := newBackend(t, a, "/backends/failover", map[string]any{"backends": []string{w1}})
	w2 := newBackend(t, a, "/backends/weighted", map[string]any{"backends": map[string]int{f2: 1}})
	a.Do(t, "PATCH", "/backends/failover/"+f1, map[string]any{"backends": []string{f1}}).ExpectError(t, http.StatusBadRequest, backends.CodeFailoverChild, "backends[0]")
	a.Do(t, "PATCH", "/backends/weighted/"+w1, map[string]any{"backends": map[string]int{w1: 1}}).ExpectError(t, http.StatusBadRequest, backends.CodeWeightedChild, "backends."+w1)
	a.Do(t, "PATCH", "/backends/failover/"+f1, map[string]any{"backends": []string{w1}}).ExpectError(t, http.StatusBadRequest, backends.CodeFailoverChild, "backends[0]")
	a.Do(t, "PATCH", "/backends/failover/"+f1, map[string]any{"backends": []string{w2}}).ExpectError(t, http.StatusBadRequest, backends.CodeFailoverChild, "backends[0]")
	a.Do(t, "PATCH", "/backends/weighted/"+w1, map[string]any{"backends": map[string]int{f1: 1, f2: 1}}).ExpectError(t, http.StatusBadRequest, backends.CodeWeightedChild, "backends."+f2)
	// A diamond is no cycle.
	a.Do(t, "PATCH", "/backends/weighted/"+w2, map[string]any{"backends": map[string]int{f2: 1, f1: 1}}).Expect(t, http.StatusOK)
	checkReferences(t, s, a)
}

// Two PATCHes that each add one reference, together closing a cycle, never both succeed: run
// at once many times, with cycles of two and of four backends.
func TestConcurrentPatchesCannotCloseACycle(t *testing.T) {
	s, a := testkit.AppAccount(t)
	type patch struct {
		path string
		body any
	}
	scenarios := map[string]func() [2]patch{
		"two": func() [2]patch {
			f := newBackend(t, a, "/backends/failover", map[string]any{})
			w := newBackend(t, a, "/backends/weighted", map[string]any{})
			return [2]patch{
				{"/backends/failover/" + f, map[string]any{"backends": []string{w}}},
				{"/backends/weighted/" + w, map[string]any{"backends": map[string]int{f: 1}}},
			}
		},
		"four": func() [2]patch {
			f1 := newBackend(t, a, "/backends/failover", map[string]any{})
			w1 := newBackend(t, a, "/backends/weighted", map[string]any{})
			a.Do(t, "PATCH", "/backends/failover/"+f1, map[string]any{"backends": []string{w1}}).Expect(t, http.StatusOK)
			f2 := newBackend(t, a, "/backends/failover", map[string]any{})
			w2 := newBackend(t, a, "/backends/weighted", map[string]any{})
			a.Do(t, "PATCH", "/backends/failover/"+f2, map[string]any{"backends": []string{w2}}).Expect(t, http.StatusOK)
			return [2]patch{
				{"/backends/weighted/" + w1, map[string]any{"backends": map[string]int{f2: 1}}},
				{"/backends/weighted/" + w2, map[string]any{"backends": map[string]int{f1: 1}}},
			}
		},
	}
	for name, setup := range scenarios {
		t.Run(name, func(t *testing.T) {
			for round := range 50 {
				ps := setup()
				var wg sync.WaitGroup
				start := make(chan struct{})
				var res [2]*testkit.Response
				for i, p := range ps {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						res[i] = a.Do(t, "PATCH", p.path, p.body)
					}()
				}
				close(start)
				wg.Wait()
				ok := 0
				for i, r := range res {
					switch r.Status {
					case http.StatusOK:
						ok++
					case http.StatusBadRequest:
						code := backends.CodeWeightedChild
						if strings.HasPrefix(ps[i].path, "/backends/failover/") {
							code = backends.CodeFailoverChild
						}
						r.ExpectError(t, http.StatusBadRequest, code, "")
					default:
						t.Fatalf("round %d: %d %s", round, r.Status, r.Body)
					}
				}
				if ok != 1 {
					t.Fatalf("round %d: %d of the two PATCHes succeeded, want exactly one", round, ok)
				}
			}
			checkReferences(t, s, a)
		})
	}
}

// DynamoDB calls per request: a create of any kind is one transaction; an update and a delete
// a read and a transaction; an update adding failover or weighted children reads once more per
// level of them it walks (the cycle check).
func TestBackendRoundTrips(t *testing.T) {
	_, a := testkit.AppAccount(t)
	st := newBackend(t, a, "/backends/static", map[string]any{"address": "a.example.com:1"})
	w := newBackend(t, a, "/backends/weighted", map[string]any{"backends": map[string]int{st: 1}})
	f2 := newBackend(t, a, "/backends/failover", map[string]any{"backends": []string{w}})
	w2 := newBackend(t, a, "/backends/weighted", map[string]any{"backends": map[string]int{f2: 1}})
	f := newBackend(t, a, "/backends/failover", map[string]any{})
	a.WithinCalls(t,
		testkit.Trip("create static", "POST", "/backends/static", map[string]any{"address": "b.example.com:1"}, 1),
		testkit.Trip("create http_response", "POST", "/backends/http_response", map[string]any{"body": "x"}, 1),
		testkit.Trip("create failover", "POST", "/backends/failover", map[string]any{"backends": []string{st, w}}, 1),
		testkit.Trip("create weighted", "POST", "/backends/weighted", map[string]any{"backends": map[string]int{st: 1, f2: 2}}, 1),
		testkit.Trip("get", "GET", "/backends/failover/"+f, nil, 1),
		testkit.Trip("update adding a leaf", "PATCH", "/backends/failover/"+f, map[string]any{"backends": []string{st}}, 2),
		testkit.Trip("update adding a weighted backend", "PATCH", "/backends/failover/"+f, map[string]any{"backends": []string{st, w}}, 3),
		testkit.Trip("update adding three levels", "PATCH", "/backends/failover/"+f, map[string]any{"backends": []string{w2}}, 5),
		testkit.Trip("delete", "DELETE", "/backends/failover/"+f, nil, 2),
	)
}
