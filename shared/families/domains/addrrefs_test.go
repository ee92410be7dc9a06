package domains_test

import (
	"fmt"
	"maps"
	"net/http"
	"testing"

	"tunnelapi/shared/app"
	"tunnelapi/shared/testing/testkit"
)

// A cloud endpoint on tcp://<reserved address> of its account carries the address's tcp_addr
// ref, and the address cannot be deleted while the endpoint uses it (446); an address another
// account reserved is refused (309) and stores nothing.
func TestEndpointsOnReservedAddrs(t *testing.T) {
	s := testkit.Shared(t, app.Families...)
	a, b := s.NewAccount(t), s.NewAccount(t)
	addr := func(acct *testkit.Account) (id, hostport string) {
		got := acct.Do(t, "POST", "/reserved_addrs", map[string]any{}).Expect(t, http.StatusCreated)
		return got["id"].(string), got["addr"].(string)
	}
	ra1, addr1 := addr(a)
	ra2, addr2 := addr(a)
	ep := func(acct *testkit.Account, url string) *testkit.Response {
		return acct.Do(t, "POST", "/endpoints", map[string]any{"url": url, "traffic_policy": "on_tcp_connect: []"})
	}
	ref := func(e map[string]any) any { return refID(e, "tcp_addr") }
	e1 := ep(a, "tcp://"+addr1).Expect(t, http.StatusCreated)
	if ref(e1) != ra1 || e1["tcp_addr"].(map[string]any)["uri"] != s.Server.URL+"/reserved_addrs/"+ra1 || e1["domain"] != nil {
		t.Fatalf("endpoint on %s: tcp_addr %v domain %v, want a ref to %s", addr1, e1["tcp_addr"], e1["domain"], ra1)
	}
	id := e1["id"].(string)
	if got := a.Do(t, "GET", "/endpoints/"+id, nil).Expect(t, http.StatusOK); ref(got) != ra1 {
		t.Fatalf("GET: tcp_addr %v", got["tcp_addr"])
	}
	a.Do(t, "DELETE", "/reserved_addrs/"+ra1, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_446", "id")
	// Another account's address, on create and on update, is refused and changes nothing.
	_, bAddr := addr(b)
	free := ep(b, "tcp://unreserved.example.com:20000").Expect(t, http.StatusCreated)
	if free["tcp_addr"] != nil {
		t.Fatalf("endpoint on an address nobody reserved has tcp_addr %v", free["tcp_addr"])
	}
	bad := []struct {
		name, method, path string
		acct               *testkit.Account
		body               any
	}{
		{"create on another account's address", "POST", "/endpoints", b, map[string]any{"url": "tcp://" + addr1, "traffic_policy": "on_tcp_connect: []"}},
		{"create on another account's address, upper case", "POST", "/endpoints", b, map[string]any{"url": "TCP://" + addr2, "traffic_policy": "on_tcp_connect: []"}},
		{"move onto another account's address", "PATCH", "/endpoints/" + id, a, map[string]any{"url": "tcp://" + bAddr}},
		{"move b's endpoint onto a's address", "PATCH", "/endpoints/" + free["id"].(string), b, map[string]any{"url": "tcp://" + addr1}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			c.acct.Do(t, c.method, c.path, c.body).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_309", "url")
		})
	}
	if ids, _ := b.WalkPages(t, "/endpoints", "endpoints"); len(ids) != 1 {
		t.Fatalf("b has %d endpoints after its refusals, want 1", len(ids))
	}
	if got := a.Do(t, "GET", "/endpoints/"+id, nil).Expect(t, http.StatusOK); got["url"] != "tcp://"+addr1 || ref(got) != ra1 {
		t.Fatalf("a refused move changed the endpoint: %v", got)
	}
	// Moving to another of a's addresses moves the reference; moving off every address drops it.
	if moved := moveEndpoint(t, s, a, id, "tcp://"+addr2); ref(moved) != ra2 {
		t.Fatalf("moved to %s: tcp_addr %v, want %s", addr2, moved["tcp_addr"], ra2)
	}
	a.Do(t, "DELETE", "/reserved_addrs/"+ra1, nil).Expect(t, http.StatusNoContent)
	a.Do(t, "DELETE", "/reserved_addrs/"+ra2, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_446", "id")
	if moved := moveEndpoint(t, s, a, id, "tcp://elsewhere.example.com:20001"); moved["tcp_addr"] != nil {
		t.Fatalf("moved off the address: tcp_addr %v", moved["tcp_addr"])
	}
	a.Do(t, "DELETE", "/reserved_addrs/"+ra2, nil).Expect(t, http.StatusNoContent)
	// Deleting the endpoint releases its address.
	ra3, addr3 := addr(a)
	e3 := ep(a, "tcp://"+addr3).Expect(t, http.StatusCreated)
	a.Do(t, "DELETE", "/endpoints/"+e3["id"].(string), nil).Expect(t, http.StatusNoContent)
	a.Do(t, "DELETE", "/reserved_addrs/"+ra3, nil).Expect(t, http.StatusNoContent)
}

// Creating endpoints on addresses while the addresses are deleted, at once: every address is
// either deleted with no endpoint referencing it, or kept with exactly the endpoints that
// reference it; an endpoint never refers to a deleted address.
func TestEndpointsAndAddrDeletionsRace(t *testing.T) {
	s := testkit.Shared(t, app.Families...)
	a := s.NewAccount(t)
	const n = 10
	ids, addrs := make([]string, n), make([]string, n)
	for i := range n {
		got := a.Do(t, "POST", "/reserved_addrs", map[string]any{}).Expect(t, http.StatusCreated)
		ids[i], addrs[i] = got["id"].(string), got["addr"].(string)
	}
	// Requests 2i and 2i+1 race for address i: an endpoint on it, and its deletion.
	res := testkit.AtOnce(2*n, func(j int) *testkit.Response {
		if j%2 == 0 {
			return a.Do(t, "POST", "/endpoints", map[string]any{"url": "tcp://" + addrs[j/2], "traffic_policy": "on_tcp_connect: []"})
		}
		return a.Do(t, "DELETE", "/reserved_addrs/"+ids[j/2], nil)
	})
	eps, dels := make([]*testkit.Response, n), make([]*testkit.Response, n)
	for i := range n {
		eps[i], dels[i] = res[2*i], res[2*i+1]
	}
	for i := range n {
		e := eps[i].Expect(t, http.StatusCreated)
		exists := a.Do(t, "GET", "/reserved_addrs/"+ids[i], nil).Status == http.StatusOK
		got := a.Do(t, "GET", "/endpoints/"+e["id"].(string), nil).Expect(t, http.StatusOK)
		refd := fmt.Sprint(got["tcp_addr"]) != "<nil>"
		switch {
		case dels[i].Status == http.StatusNoContent && (exists || refd):
			t.Errorf("%s deleted, yet exists=%v and its endpoint refers to it: %v", ids[i], exists, got["tcp_addr"])
		case dels[i].Status != http.StatusNoContent:
			dels[i].ExpectError(t, http.StatusBadRequest, "ERR_NGROK_446", "id")
			if !exists || !refd {
				t.Errorf("%s refused as in use, yet exists=%v referenced=%v", ids[i], exists, refd)
			}
		}
	}
}

// refID is the id of the ref in member of the resource e, or the member itself when it is not a ref.
func refID(e map[string]any, member string) any {
	if r, ok := e[member].(map[string]any); ok {
		return r["id"]
	}
	return e[member]
}

// moveEndpoint PATCHes the url of a's endpoint id and returns the endpoint, checking that the
// move reads the reservation guards of its new URL with the endpoint: one read and one
// transaction.
func moveEndpoint(t *testing.T, s *testkit.Stack, a *testkit.Account, id, url string) map[string]any {
	t.Helper()
	var moved map[string]any
	calls := s.RoundTripsOf(t, func() {
		moved = a.Do(t, "PATCH", "/endpoints/"+id, map[string]any{"url": url}).Expect(t, http.StatusOK)
	})
	if want := testkit.RoundTrips["update"]; !maps.Equal(calls, want) {
		t.Errorf("moving an endpoint to %s made DynamoDB calls %v, want %v", url, calls, want)
	}
	return moved
}
