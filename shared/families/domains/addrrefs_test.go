package domains_test

import (
	"maps"
	"net/http"
	"strings"
	"testing"

	"tunnelapi/shared/testing/testkit"
)

// A cloud endpoint on tcp://<reserved address> of its account carries the address's tcp_addr
// ref, and the address cannot be deleted while the endpoint uses it (446); an address another
// account reserved is refused (309) and stores nothing.
func TestEndpointsOnReservedAddrs(t *testing.T) {
	s, a, b := testkit.AppTwoAccounts(t)
	addr1, ra1 := a.ReserveAddr(t)
	addr2, ra2 := a.ReserveAddr(t)
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
	bAddr, _ := b.ReserveAddr(t)
	free := ep(b, "tcp://"+bAddr).Expect(t, http.StatusCreated)
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
	web, rd := a.ReserveDomain(t)
	if moved := moveEndpoint(t, s, a, id, "https://"+web); moved["tcp_addr"] != nil || refID(moved, "domain") != rd {
		t.Fatalf("moved off the address onto a reserved domain: tcp_addr %v domain %v", moved["tcp_addr"], moved["domain"])
	}
	a.Do(t, "DELETE", "/reserved_addrs/"+ra2, nil).Expect(t, http.StatusNoContent)
	// Deleting the endpoint releases its address.
	addr3, ra3 := a.ReserveAddr(t)
	e3 := ep(a, "tcp://"+addr3).Expect(t, http.StatusCreated)
	a.Do(t, "DELETE", "/endpoints/"+e3["id"].(string), nil).Expect(t, http.StatusNoContent)
	a.Do(t, "DELETE", "/reserved_addrs/"+ra3, nil).Expect(t, http.StatusNoContent)
}

// Creating endpoints on addresses while the addresses are deleted, at once: exactly one of each
// pair wins. Either the endpoint committed first and references the address, which is then
// kept (446), or the address was deleted first and the endpoint, finding no reservation left,
// is refused (307) and stored nothing; an endpoint never refers to a deleted address.
func TestEndpointsAndAddrDeletionsRace(t *testing.T) {
	_, a := testkit.AppAccount(t)
	const n = 10
	ids, addrs := make([]string, n), make([]string, n)
	for i := range n {
		addrs[i], ids[i] = a.ReserveAddr(t)
	}
	// Requests 2i and 2i+1 race for address i: an endpoint on it, and its deletion.
	res := testkit.AtOnce(2*n, func(j int) *testkit.Response {
		if j%2 == 0 {
			return a.Do(t, "POST", "/endpoints", map[string]any{"url": "tcp://" + addrs[j/2], "traffic_policy": "on_tcp_connect: []"})
		}
		return a.Do(t, "DELETE", "/reserved_addrs/"+ids[j/2], nil)
	})
	created := 0
	for i := range n {
		ep, del := res[2*i], res[2*i+1]
		exists := a.Do(t, "GET", "/reserved_addrs/"+ids[i], nil).Status == http.StatusOK
		switch {
		case ep.Status == http.StatusCreated:
			created++
			del.ExpectError(t, http.StatusBadRequest, "ERR_NGROK_446", "id")
			got := a.Do(t, "GET", "/endpoints/"+ep.JSON(t)["id"].(string), nil).Expect(t, http.StatusOK)
			if !exists || refID(got, "tcp_addr") != ids[i] {
				t.Errorf("endpoint on %s created, yet the address exists=%v and tcp_addr is %v", addrs[i], exists, got["tcp_addr"])
			}
		default:
			ep.ExpectError(t, http.StatusBadRequest, "ERR_NGROK_307", "url")
			del.Expect(t, http.StatusNoContent)
			if exists {
				t.Errorf("%s deleted, yet it exists", ids[i])
			}
		}
	}
	if eps, _ := a.WalkPages(t, "/endpoints", "endpoints"); len(eps) != created {
		t.Errorf("%d endpoints stored, %d created", len(eps), created)
	}
}

// refID is the id of the ref in member of the resource e, or the member itself when it is not a ref.
func refID(e map[string]any, member string) any {
	if r, ok := e[member].(map[string]any); ok {
		return r["id"]
	}
	return e[member]
}

// moveEndpoint PATCHes the url of a's endpoint id (and the other members of kv, name then
// value) and returns the endpoint, checking that the move reads the reservation guards of its
// new URL with the endpoint: one read and one transaction.
func moveEndpoint(t *testing.T, s *testkit.Stack, a *testkit.Account, id, url string, kv ...any) map[string]any {
	t.Helper()
	body := map[string]any{"url": url}
	for i := 0; i+1 < len(kv); i += 2 {
		body[kv[i].(string)] = kv[i+1]
	}
	var moved map[string]any
	calls := s.RoundTripsOf(t, func() {
		moved = a.Do(t, "PATCH", "/endpoints/"+id, body).Expect(t, http.StatusOK)
	})
	if want := testkit.RoundTrips["update"]; !maps.Equal(calls, want) {
		t.Errorf("moving an endpoint to %s made DynamoDB calls %v, want %v", url, calls, want)
	}
	return moved
}

// A public tcp endpoint must be on a reserved address of its account: any other tcp address, in
// a region's pool or on a host the service does not own, is refused with 307 naming the field
// that made it one (url, or bindings when they turn an endpoint public), after the one read
// that looks the address up and before any write, so nothing is stored. Internal and
// kubernetes endpoints are served on no public address and need none.
func TestTCPEndpointsMustBeReserved(t *testing.T) {
	s, a, b := testkit.AppTwoAccounts(t)
	reserve := func(acct *testkit.Account, region string) (id, hostport string) {
		got := acct.Do(t, "POST", "/reserved_addrs", map[string]any{"region": region}).Expect(t, http.StatusCreated)
		return got["id"].(string), got["addr"].(string)
	}
	// released is an address of region's pool that was reserved and is free again.
	released := func(region string) string {
		id, hp := reserve(a, region)
		a.Do(t, "DELETE", "/reserved_addrs/"+id, nil).Expect(t, http.StatusNoContent)
		return hp
	}
	ra, mine := reserve(a, "us")
	_, theirs := reserve(b, "us")
	usFree, euFree := released("us"), released("eu")
	usHost := usFree[:strings.LastIndexByte(usFree, ':')]
	body := func(url string, kv ...any) map[string]any {
		m := map[string]any{"url": url, "traffic_policy": "on_tcp_connect: []"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	onAddr := a.Do(t, "POST", "/endpoints", body("tcp://"+mine)).Expect(t, http.StatusCreated)
	if refID(onAddr, "tcp_addr") != ra {
		t.Fatalf("endpoint on its account's address: tcp_addr %v, want %s", onAddr["tcp_addr"], ra)
	}
	domain, _ := a.ReserveDomain(t)
	web := a.Do(t, "POST", "/endpoints", body("https://"+domain)).Expect(t, http.StatusCreated)
	cluster := a.Do(t, "POST", "/endpoints", body("tcp://db.example.com:5432", "bindings", []string{"kubernetes"})).Expect(t, http.StatusCreated)
	internal := a.Do(t, "POST", "/endpoints", body("tcp://db.internal:5432")).Expect(t, http.StatusCreated)
	for _, e := range []map[string]any{web, cluster, internal} {
		if e["tcp_addr"] != nil {
			t.Errorf("endpoint on %v has tcp_addr %v", e["url"], e["tcp_addr"])
		}
	}
	patch := func(e map[string]any) string { return "/endpoints/" + e["id"].(string) }
	cases := []struct {
		name, method, path string
		body               map[string]any
		code, field        string
	}{
		{"a released address of the default region's pool", "POST", "/endpoints", body("tcp://" + usFree), "ERR_NGROK_307", "url"},
		{"a released address of another region's pool", "POST", "/endpoints", body("tcp://" + euFree), "ERR_NGROK_307", "url"},
		{"a pool host on a port outside the pool", "POST", "/endpoints", body("tcp://" + usHost + ":443"), "ERR_NGROK_307", "url"},
		{"a pool host in capitals", "POST", "/endpoints", body("TCP://" + strings.ToUpper(usFree)), "ERR_NGROK_307", "url"},
		{"a host the service does not own", "POST", "/endpoints", body("tcp://db.example.com:5432"), "ERR_NGROK_307", "url"},
		{"the public binding named", "POST", "/endpoints", body("tcp://"+usFree, "bindings", []string{"public"}), "ERR_NGROK_307", "url"},
		{"pooled", "POST", "/endpoints", body("tcp://"+usFree, "pooling_enabled", true), "ERR_NGROK_307", "url"},
		{"another account's address", "POST", "/endpoints", body("tcp://" + theirs), "ERR_NGROK_309", "url"},
		{"move off its address", "PATCH", patch(onAddr), map[string]any{"url": "tcp://" + usFree}, "ERR_NGROK_307", "url"},
		{"move an https endpoint onto tcp", "PATCH", patch(web), map[string]any{"url": "tcp://" + euFree}, "ERR_NGROK_307", "url"},
		{"move a kubernetes endpoint public", "PATCH", patch(cluster), map[string]any{"bindings": []string{"public"}}, "ERR_NGROK_307", "bindings"},
		{"move a kubernetes endpoint public onto another host", "PATCH", patch(cluster), map[string]any{"url": "tcp://" + usFree, "bindings": []string{"public"}}, "ERR_NGROK_307", "url"},
	}
	before := a.Snapshot(t, "endpoint_url", "tcp_addr")
	a.Do(t, "GET", "/endpoints", nil).Expect(t, http.StatusOK) // the process knows the token
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var res *testkit.Response
			calls := s.RoundTripsOf(t, func() { res = a.Do(t, c.method, c.path, c.body) })
			res.ExpectError(t, http.StatusBadRequest, c.code, c.field)
			// A create reads the caller with the guards; an update reads them with the endpoint.
			// Bindings alone name no URL to read guards of ahead: the endpoint's own are looked up
			// in what the process knows, which the refusal confirms with a second read.
			reads := 1
			if c.field == "bindings" {
				reads = 2
			}
			if want := map[string]int{"BatchGetItem": reads}; !maps.Equal(calls, want) {
				t.Errorf("DynamoDB calls %v, want %v", calls, want)
			}
			a.Unchanged(t, before, c.name)
		})
	}
	if len(before.Items) == 0 {
		t.Fatal("the snapshot holds nothing: the checks above would prove nothing")
	}
	// The refused move left the endpoint on its address, which it still holds.
	a.Do(t, "DELETE", "/reserved_addrs/"+ra, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_446", "id")
}
