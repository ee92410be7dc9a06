package edges_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"tunnelapi/shared/families/edges"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/testing/testkit"
)

// badCase is a refused request: its code, the field it names, and nothing stored.
type badCase struct {
	name         string
	method, path string
	body         any
	code, field  string
}

// refuse sends each case and checks its code and field, and that the account's items (edges,
// guards, reference counts, audit log) are as before.
func refuse(t *testing.T, s *testkit.Stack, a *testkit.Account, cases []badCase) {
	t.Helper()
	before := a.Snapshot(t, "edge_hostport")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a.Do(t, c.method, c.path, c.body).ExpectError(t, http.StatusBadRequest, c.code, c.field)
			a.Unchanged(t, before, c.name)
		})
	}
}

// with returns body plus the members kv.
func with(body map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range body {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func TestTLSEdgeBadInput(t *testing.T) {
	s, a, other := testkit.AppTwoAccounts(t)
	mine, _ := a.ReserveDomain(t)
	theirs, _ := other.ReserveDomain(t)
	addr, _ := a.ReserveAddr(t)
	theirBackend, theirCA, theirPolicy := newBackend(t, other), newCA(t, other), newPolicy(t, other)
	edge, mods := tls.full(t, a)
	id := edge["id"].(string)
	bare := tls.create(t, a, map[string]any{})["id"].(string)
	long := strings.Repeat("x", 256)
	many := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = ids.New(prefix)
		}
		return out
	}
	manyHostports := make([]string, 11)
	for i := range manyHostports {
		manyHostports[i] = fmt.Sprintf("h%d.%s:443", i, mine)
	}
	post := func(name string, body map[string]any, code, field string) badCase {
		return badCase{"POST " + name, "POST", "/edges/tls", body, code, field}
	}
	patch := func(name string, body map[string]any, code, field string) badCase {
		return badCase{"PATCH " + name, "PATCH", "/edges/tls/" + id, body, code, field}
	}
	put := func(name, module string, body any, code, field string) badCase {
		return badCase{"PUT " + module + " " + name, "PUT", "/edges/tls/" + id + "/" + module, body, code, field}
	}
	hostports := func(hp ...string) map[string]any { return map[string]any{"hostports": hp} }
	upstream := map[string]any{"terminate_at": "upstream"}
	cases := []badCase{
		post("long description", map[string]any{"description": long}, "ERR_NGROK_7073", "description"),
		post("long metadata", map[string]any{"metadata": strings.Repeat("m", 4097)}, "ERR_NGROK_7074", "metadata"),
		post("hostport without port", hostports(mine), "ERR_NGROK_7104", "hostports[0]"),
		post("hostport not a name", hostports("a b.example.com:443"), "ERR_NGROK_7104", "hostports[0]"),
		post("hostport empty port", hostports(mine+":"), "ERR_NGROK_7104", "hostports[0]"),
		post("hostport port letters", hostports(mine+":https"), "ERR_NGROK_7104", "hostports[0]"),
		post("hostport port 0", hostports(mine+":0"), "ERR_NGROK_7112", "hostports[0]"),
		post("hostport port 70000", hostports(mine+":70000"), "ERR_NGROK_7112", "hostports[0]"),
		post("hostport on port 80", hostports(mine+":80"), "ERR_NGROK_7116", "hostports[0]"),
		post("hostport not reserved", hostports("free-"+mine+":443"), "ERR_NGROK_7117", "hostports[0]"),
		post("hostport of another account", hostports(theirs+":443"), "ERR_NGROK_7118", "hostports[0]"),
		post("a TCP address", hostports(addr), "ERR_NGROK_7133", "hostports[0]"),
		post("a TCP pool host", hostports("tcp.eu.tunnels.example.com:443"), "ERR_NGROK_7133", "hostports[0]"),
		post("a hostport twice", hostports(mine+":443", strings.ToUpper(mine)+":443"), "ERR_NGROK_215", "hostports[1]"),
		post("too many hostports", hostports(manyHostports...), "ERR_NGROK_7129", "hostports"),
		post("hostports not a list", map[string]any{"hostports": "x"}, "ERR_NGROK_215", "hostports"),
		post("unknown module", map[string]any{"route": map[string]any{}}, "ERR_NGROK_214", "route"),
		post("module not an object", map[string]any{"backend": "x"}, "ERR_NGROK_215", "backend"),
		post("unknown module member", map[string]any{"backend": map[string]any{"backend_id": theirBackend, "weight": 1}}, "ERR_NGROK_214", "backend.weight"),
		post("enabled not a boolean", map[string]any{"backend": map[string]any{"enabled": "yes"}}, "ERR_NGROK_215", "backend.enabled"),
		post("backend without id", map[string]any{"backend": map[string]any{}}, "ERR_NGROK_6526", "backend.backend_id"),
		post("backend id of another kind", map[string]any{"backend": map[string]any{"backend_id": ids.New(ids.IPPolicy)}}, "ERR_NGROK_6526", "backend.backend_id"),
		post("backend missing", map[string]any{"backend": map[string]any{"backend_id": ids.New(ids.TunnelGroupBackend)}}, "ERR_NGROK_6501", "backend.backend_id"),
		post("backend of another account", map[string]any{"backend": map[string]any{"backend_id": theirBackend}}, "ERR_NGROK_6501", "backend.backend_id"),
		post("ip_restriction without policies", map[string]any{"ip_restriction": map[string]any{}}, "ERR_NGROK_7025", "ip_restriction.ip_policy_ids"),
		post("ip_restriction empty", map[string]any{"ip_restriction": map[string]any{"ip_policy_ids": []string{}}}, "ERR_NGROK_7025", "ip_restriction.ip_policy_ids"),
		post("ip_restriction too many", map[string]any{"ip_restriction": map[string]any{"ip_policy_ids": many(ids.IPPolicy, 11)}}, "ERR_NGROK_7013", "ip_restriction.ip_policy_ids"),
		post("ip_restriction malformed id", map[string]any{"ip_restriction": map[string]any{"ip_policy_ids": []string{"nope"}}}, "ERR_NGROK_7007", "ip_restriction.ip_policy_ids[0]"),
		post("ip_restriction missing policy", map[string]any{"ip_restriction": map[string]any{"ip_policy_ids": many(ids.IPPolicy, 1)}}, "ERR_NGROK_7007", "ip_restriction.ip_policy_ids"),
		post("ip_restriction policy of another account", map[string]any{"ip_restriction": map[string]any{"ip_policy_ids": []string{theirPolicy}}}, "ERR_NGROK_7007", "ip_restriction.ip_policy_ids"),
		post("ip_restriction policy twice", map[string]any{"ip_restriction": map[string]any{"ip_policy_ids": []string{theirPolicy, theirPolicy}}}, "ERR_NGROK_215", "ip_restriction.ip_policy_ids[1]"),
		post("mutual_tls too many", map[string]any{"mutual_tls": map[string]any{"certificate_authority_ids": many(ids.CertificateAuthority, 11)}}, "ERR_NGROK_7075", "mutual_tls.certificate_authority_ids"),
		post("mutual_tls malformed id", map[string]any{"mutual_tls": map[string]any{"certificate_authority_ids": []string{ids.New(ids.IPPolicy)}}}, "ERR_NGROK_7072", "mutual_tls.certificate_authority_ids[0]"),
		post("mutual_tls CA of another account", map[string]any{"mutual_tls": map[string]any{"certificate_authority_ids": []string{theirCA}}}, "ERR_NGROK_7072", "mutual_tls.certificate_authority_ids"),
		post("terminate_at agent", map[string]any{"tls_termination": map[string]any{"terminate_at": "agent"}}, "ERR_NGROK_224", "tls_termination.terminate_at"),
		post("terminate_at empty", map[string]any{"tls_termination": map[string]any{"terminate_at": ""}}, "ERR_NGROK_224", "tls_termination.terminate_at"),
		post("min_version 1.1", map[string]any{"tls_termination": map[string]any{"min_version": "1.1"}}, "ERR_NGROK_219", "tls_termination.min_version"),
		post("upstream with min_version", map[string]any{"tls_termination": map[string]any{"terminate_at": "upstream", "min_version": "1.2"}}, "ERR_NGROK_7032", "tls_termination.min_version"),
		post("upstream with mutual_tls", map[string]any{"tls_termination": upstream, "mutual_tls": mods["mutual_tls"].body, "hostports": []string{mine + ":443"}}, "ERR_NGROK_7032", "mutual_tls"),
		post("traffic_policy without value", map[string]any{"traffic_policy": map[string]any{"enabled": true}}, "ERR_NGROK_215", "traffic_policy.value"),
		post("traffic_policy invalid", map[string]any{"traffic_policy": map[string]any{"value": "on_tcp_connect: [{actions: [{type: no-such-action}]}]"}}, "", "traffic_policy.value"),
		patch("nothing", map[string]any{}, "ERR_NGROK_606", "body"),
		patch("long description", map[string]any{"description": long}, "ERR_NGROK_7073", "description"),
		patch("hostport of another account", hostports(theirs+":443"), "ERR_NGROK_7118", "hostports[0]"),
		patch("backend missing", map[string]any{"backend": map[string]any{"backend_id": ids.New(ids.TunnelGroupBackend)}}, "ERR_NGROK_6501", "backend.backend_id"),
		patch("ip_restriction missing policy", map[string]any{"ip_restriction": map[string]any{"ip_policy_ids": many(ids.IPPolicy, 1)}}, "ERR_NGROK_7007", "ip_restriction.ip_policy_ids"),
		patch("upstream while mutual_tls is set", map[string]any{"tls_termination": upstream}, "ERR_NGROK_7032", "mutual_tls"),
		patch("text with a bad module", map[string]any{"description": "new", "tls_termination": map[string]any{"min_version": "tls1.3"}}, "ERR_NGROK_219", "tls_termination.min_version"),
		patch("path id differs", map[string]any{"id": bare, "description": "x"}, "ERR_NGROK_215", "id"),
		put("empty", "backend", map[string]any{}, "ERR_NGROK_6526", "backend_id"),
		put("wrapped empty", "backend", map[string]any{"id": id, "module": map[string]any{}}, "ERR_NGROK_6526", "module.backend_id"),
		put("missing", "backend", map[string]any{"backend_id": ids.New(ids.TunnelGroupBackend)}, "ERR_NGROK_6501", "backend_id"),
		put("of another account", "ip_restriction", map[string]any{"ip_policy_ids": []string{theirPolicy}}, "ERR_NGROK_7007", "ip_policy_ids"),
		put("wrapped of another account", "mutual_tls", map[string]any{"module": map[string]any{"certificate_authority_ids": []string{theirCA}}}, "ERR_NGROK_7072", "module.certificate_authority_ids"),
		put("unknown member", "traffic_policy", map[string]any{"value": tcpPolicy, "bogus": 1}, "ERR_NGROK_214", "bogus"),
		put("upstream while mutual_tls is set", "tls_termination", upstream, "ERR_NGROK_7032", "mutual_tls"),
		put("upstream with min_version", "tls_termination", map[string]any{"terminate_at": "upstream", "min_version": "1.3"}, "ERR_NGROK_7032", "min_version"),
		put("path id differs", "traffic_policy", map[string]any{"id": bare, "module": mods["traffic_policy"].body}, "ERR_NGROK_215", "id"),
		put("not JSON", "traffic_policy", "{", "ERR_NGROK_213", ""),
	}
	refuse(t, s, a, cases)

	// With TLS terminated upstream, mutual TLS cannot be added, by PUT or PATCH.
	a.Do(t, "PUT", "/edges/tls/"+bare+"/tls_termination", upstream).Expect(t, http.StatusOK)
	refuse(t, s, a, []badCase{
		{"PUT mutual_tls upstream", "PUT", "/edges/tls/" + bare + "/mutual_tls", mods["mutual_tls"].body, "ERR_NGROK_7032", "mutual_tls"},
		{"PATCH mutual_tls upstream", "PATCH", "/edges/tls/" + bare, map[string]any{"mutual_tls": mods["mutual_tls"].body}, "ERR_NGROK_7032", "mutual_tls"},
	})
	// Upstream with the modules that work on encrypted traffic is accepted.
	got := a.Do(t, "PATCH", "/edges/tls/"+bare, map[string]any{"backend": mods["backend"].body, "ip_restriction": mods["ip_restriction"].body,
		"traffic_policy": mods["traffic_policy"].body}).Expect(t, http.StatusOK)
	if fmt.Sprint(got["tls_termination"]) != "map[enabled:true min_version:<nil> terminate_at:upstream]" {
		t.Errorf("tls_termination %v", got["tls_termination"])
	}
}

// Every documented member of the create and update forms is accepted with a valid value.
func TestTLSEdgeEveryDocumentedField(t *testing.T) {
	_, a := testkit.AppAccount(t)
	edge, mods := tls.full(t, a)
	hp, _ := tls.hostport(t, a)
	body := map[string]any{"id": edge["id"], "description": "d", "metadata": "m", "hostports": []string{hp}}
	for name, m := range mods {
		body[name] = with(m.body, "enabled", true)
	}
	got := a.Do(t, "PATCH", "/edges/tls/"+edge["id"].(string), body).Expect(t, http.StatusOK)
	if got["metadata"] != "m" || fmt.Sprint(got["hostports"]) != "["+hp+"]" {
		t.Errorf("PATCH with every field: %v", got)
	}
	term := a.Do(t, "PUT", "/edges/tls/"+edge["id"].(string)+"/tls_termination", map[string]any{"enabled": false, "terminate_at": "edge", "min_version": nil}).Expect(t, http.StatusOK)
	if fmt.Sprint(term) != "map[enabled:false min_version:<nil> terminate_at:edge]" {
		t.Errorf("tls_termination %v", term)
	}
}

// A wildcard reservation covers the names one label under it (and itself): edges serve them,
// each referencing the wildcard domain, which cannot be deleted while they do.
func TestTLSEdgeOnWildcardDomain(t *testing.T) {
	s, a := testkit.AppAccount(t)
	name, _ := a.ReserveDomain(t)
	wild := a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": "*." + name}).Expect(t, http.StatusCreated)["id"].(string)
	one := tls.create(t, a, map[string]any{"hostports": []string{"a." + name + ":443"}})["id"].(string)
	two := tls.create(t, a, map[string]any{"hostports": []string{"b." + name + ":443", "*." + name + ":443"}})["id"].(string)
	// An edge references a domain once, however many of its hostports are on it.
	if n := refsOf(t, s, a, wild); n != 2 {
		t.Errorf("the wildcard domain has %d references, want 2", n)
	}
	a.Do(t, "POST", "/edges/tls", map[string]any{"hostports": []string{"x.a." + name + ":443"}}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_7117", "hostports[0]")
	a.Do(t, "DELETE", "/reserved_domains/"+wild, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_446", "id")
	a.Do(t, "DELETE", "/edges/tls/"+one, nil).Expect(t, http.StatusNoContent)
	a.Do(t, "DELETE", "/edges/tls/"+two, nil).Expect(t, http.StatusNoContent)
	a.Do(t, "DELETE", "/reserved_domains/"+wild, nil).Expect(t, http.StatusNoContent)
}

// The largest update (every hostport, IP policy and certificate authority replaced by others at
// their limits, and another backend) commits in one transaction, references moved.
func TestTLSEdgeLargestUpdate(t *testing.T) {
	s, a := testkit.AppAccount(t)
	set := func() (hps, policies, cas []string, backend string) {
		for range edges.MaxHostports {
			hp, _ := tls.hostport(t, a)
			hps = append(hps, hp)
		}
		for range edges.MaxIPPolicies {
			policies = append(policies, newPolicy(t, a))
		}
		for range edges.MaxCAs {
			cas = append(cas, newCA(t, a))
		}
		return hps, policies, cas, newBackend(t, a)
	}
	body := func(hps, policies, cas []string, backend string) map[string]any {
		return map[string]any{"hostports": hps, "backend": map[string]any{"backend_id": backend},
			"ip_restriction": map[string]any{"ip_policy_ids": policies}, "mutual_tls": map[string]any{"certificate_authority_ids": cas}}
	}
	h1, p1, c1, b1 := set()
	h2, p2, c2, b2 := set()
	id := tls.create(t, a, body(h1, p1, c1, b1))["id"].(string)
	s.Calls.Reset()
	got := a.Do(t, "PATCH", "/edges/tls/"+id, body(h2, p2, c2, b2)).Expect(t, http.StatusOK)
	if n := s.Calls.ByName()["TransactWriteItems"]; n != 1 {
		t.Errorf("the largest update made %d transactions, want 1", n)
	}
	if fmt.Sprint(got["hostports"]) != fmt.Sprint(h2) {
		t.Errorf("hostports %v, want %v", got["hostports"], h2)
	}
	for _, old := range append(append([]string{b1}, p1...), c1...) {
		if n := refsOf(t, s, a, old); n != 0 {
			t.Errorf("%s still has %d references", old, n)
		}
	}
	for _, fresh := range append(append([]string{b2}, p2...), c2...) {
		if n := refsOf(t, s, a, fresh); n != 1 {
			t.Errorf("%s has %d references, want 1", fresh, n)
		}
	}
	// The released hostports are free for another edge.
	tls.create(t, a, map[string]any{"hostports": h1})
}
