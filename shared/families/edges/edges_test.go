package edges_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"

	"tunnelapi/shared/families/edges"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/testing/testkit"
)

// family is what the shared tests of this file need to know of an edge family.
type family struct {
	d *resource.Descriptor
	// hostport reserves something the family's edges may serve and returns the hostport and
	// the reservation's id.
	hostport func(t testing.TB, a *testkit.Account) (string, string)
	// modules returns a valid body of each of the family's modules, referencing fresh
	// resources of a, with the ids it references.
	modules func(t testing.TB, a *testkit.Account) map[string]moduleBody
	// names are the family's modules, in the order of its responses.
	names []string
}

type moduleBody struct {
	body map[string]any
	refs []string
}

var tls = family{
	d:     edges.TLSEdgesDescriptor,
	names: []string{"backend", "ip_restriction", "mutual_tls", "tls_termination", "traffic_policy"},
	hostport: func(t testing.TB, a *testkit.Account) (string, string) {
		name, id := a.ReserveDomain(t)
		return name + ":443", id
	},
	modules: func(t testing.TB, a *testkit.Account) map[string]moduleBody {
		b, p, ca := newBackend(t, a), newPolicy(t, a), newCA(t, a)
		return map[string]moduleBody{
			"backend":         {map[string]any{"backend_id": b}, []string{b}},
			"ip_restriction":  {map[string]any{"enabled": false, "ip_policy_ids": []string{p}}, []string{p}},
			"mutual_tls":      {map[string]any{"certificate_authority_ids": []string{ca}}, []string{ca}},
			"tls_termination": {map[string]any{"terminate_at": "edge", "min_version": "1.3"}, nil},
			"traffic_policy":  {map[string]any{"value": tcpPolicy}, nil},
		}
	},
}

var tcp = family{
	d:     edges.TCPEdgesDescriptor,
	names: []string{"backend", "ip_restriction", "traffic_policy"},
	hostport: func(t testing.TB, a *testkit.Account) (string, string) {
		return a.ReserveAddr(t)
	},
	modules: func(t testing.TB, a *testkit.Account) map[string]moduleBody {
		b, p := newBackend(t, a), newPolicy(t, a)
		return map[string]moduleBody{
			"backend":        {map[string]any{"backend_id": b}, []string{b}},
			"ip_restriction": {map[string]any{"enabled": false, "ip_policy_ids": []string{p}}, []string{p}},
			"traffic_policy": {map[string]any{"value": tcpPolicy}, nil},
		}
	},
}

var families = []family{tls, tcp}

// eachKind runs test for each edge kind, as a subtest named by its path.
func eachKind(t *testing.T, test func(t *testing.T, f family)) {
	t.Helper()
	for _, f := range families {
		t.Run(f.d.Path, func(t *testing.T) { test(t, f) })
	}
}

// knownHostport reserves a hostport for f's edges and makes the process learn who holds it (an
// edge made on it and deleted), so that the next create on it is warm: one DynamoDB call.
func (f family) knownHostport(t testing.TB, a *testkit.Account) string {
	t.Helper()
	hp, _ := f.hostport(t, a)
	first := f.create(t, a, map[string]any{"hostports": []string{hp}})["id"].(string)
	a.Do(t, "DELETE", f.d.Path+"/"+first, nil).Expect(t, http.StatusNoContent)
	return hp
}

func (f family) create(t testing.TB, a *testkit.Account, body map[string]any) map[string]any {
	t.Helper()
	return a.Do(t, "POST", f.d.Path, body).Expect(t, http.StatusCreated)
}

// full creates an edge of f with every module and a hostport; it returns the edge and the
// module bodies.
func (f family) full(t testing.TB, a *testkit.Account) (map[string]any, map[string]moduleBody) {
	t.Helper()
	hp, _ := f.hostport(t, a)
	mods := f.modules(t, a)
	body := map[string]any{"description": "full", "hostports": []string{hp}}
	for name, m := range mods {
		body[name] = m.body
	}
	return f.create(t, a, body), mods
}

func TestConformance(t *testing.T) {
	s := testkit.App(t)
	eachKind(t, func(t *testing.T, f family) {
		s.Conformance(t, testkit.FamilySpec{
			Family: f.d,
			Create: func(t *testing.T, a *testkit.Account, n int) any {
				return map[string]any{"description": fmt.Sprint("edge ", n), "hostports": []string{f.knownHostport(t, a)},
					"traffic_policy": map[string]any{"value": tcpPolicy}}
			},
			Update:      map[string]any{"description": "renamed", "metadata": "m"},
			UpdateWants: map[string]any{"description": "renamed", "metadata": "m", "backend": nil},
			// Who holds a hostport is what the process knows of it, asserted by the one
			// transaction: the create measured is the second on its hostport (knownHostport).
		})
	})
}

// Every module is rendered in response form (refs with URIs, enabled defaulting to true) and
// absent ones are null; GET and the list show the edge as the create returned it.
func TestModulesInResponseForm(t *testing.T) {
	s, a := testkit.AppAccount(t)
	eachKind(t, func(t *testing.T, f family) {
		bare := f.create(t, a, map[string]any{})
		for _, mod := range moduleNames(f) {
			if v, ok := bare[mod]; !ok || v != nil {
				t.Errorf("bare edge: %s = %v, want null", mod, v)
			}
		}
		if hp, ok := bare["hostports"]; !ok || hp != nil {
			t.Errorf("bare edge: hostports %v, want null", hp)
		}
		edge, mods := f.full(t, a)
		want := map[string]string{
			"backend":         `{"enabled":true,"backend":{"id":"%[1]s","uri":"` + s.Server.URL + `/backends/tunnel_group/%[1]s"}}`,
			"ip_restriction":  `{"enabled":false,"ip_policies":[{"id":"%[1]s","uri":"` + s.Server.URL + `/ip_policies/%[1]s"}]}`,
			"mutual_tls":      `{"enabled":true,"certificate_authorities":[{"id":"%[1]s","uri":"` + s.Server.URL + `/certificate_authorities/%[1]s"}]}`,
			"tls_termination": `{"enabled":true,"terminate_at":"edge","min_version":"1.3"}`,
			"traffic_policy":  `{"enabled":true,"value":` + testkit.JSONString(tcpPolicy) + `}`,
		}
		id := edge["id"].(string)
		got := raw(t, a.Do(t, "GET", f.d.Path+"/"+id, nil))
		for name, m := range mods {
			w := want[name]
			if len(m.refs) > 0 {
				w = strings.ReplaceAll(w, "%[1]s", m.refs[0])
			}
			if string(got[name]) != w {
				t.Errorf("%s = %s, want %s", name, got[name], w)
			}
			module := a.Do(t, "GET", f.d.Path+"/"+id+"/"+name, nil).Expect(t, http.StatusOK)
			if b, _ := json.Marshal(module); string(b) != string(compact(t, got[name])) {
				t.Errorf("GET …/%s = %s, the edge shows %s", name, b, got[name])
			}
		}
		listed := false
		for _, it := range a.Do(t, "GET", f.d.Path, nil).Expect(t, http.StatusOK)[f.d.ListKey].([]any) {
			if it.(map[string]any)["id"] != id {
				continue
			}
			listed = true
			if b, _ := json.Marshal(it); string(b) != string(compact(t, a.Do(t, "GET", f.d.Path+"/"+id, nil).Body)) {
				t.Errorf("listed %s, GET gives %s", b, a.Do(t, "GET", f.d.Path+"/"+id, nil).Body)
			}
		}
		if !listed {
			t.Errorf("%s is not listed", id)
		}
	})
}

func moduleNames(f family) []string { return f.names }

func compact(t testing.TB, b []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return out
}

// A module supplied in PATCH replaces the stored one; every omitted module stays byte for byte;
// a PATCH of other members leaves every module.
func TestUpdateReplacesOnlySuppliedModules(t *testing.T) {
	s, a := testkit.AppAccount(t)
	eachKind(t, func(t *testing.T, f family) {
		edge, _ := f.full(t, a)
		path := f.d.Path + "/" + edge["id"].(string)
		fresh := f.modules(t, a)
		for _, name := range moduleNames(f) {
			before := raw(t, a.Do(t, "GET", path, nil))
			after := raw(t, a.Do(t, "PATCH", path, map[string]any{name: fresh[name].body}))
			for _, other := range moduleNames(f) {
				if other != name && string(before[other]) != string(after[other]) {
					t.Errorf("PATCH of %s changed %s: %s → %s", name, other, before[other], after[other])
				}
			}
			if string(before[name]) == string(after[name]) && len(fresh[name].refs) > 0 {
				t.Errorf("PATCH of %s left it %s", name, after[name])
			}
			if g := raw(t, a.Do(t, "GET", path, nil)); string(g[name]) != string(after[name]) {
				t.Errorf("GET after PATCH of %s: %s, PATCH answered %s", name, g[name], after[name])
			}
		}
		// The references moved with the modules: the first resources are free, the fresh
		// ones held once.
		for _, m := range fresh {
			for _, id := range m.refs {
				if n := refsOf(t, s, a, id); n != 1 {
					t.Errorf("%s has %d references, want 1", id, n)
				}
			}
		}
		before := raw(t, a.Do(t, "GET", path, nil))
		after := raw(t, a.Do(t, "PATCH", path, map[string]any{"description": "only text"}))
		for _, name := range moduleNames(f) {
			if string(before[name]) != string(after[name]) {
				t.Errorf("PATCH of description changed %s", name)
			}
		}
	})
}

// Each module's routes: PUT replaces (the module object, or {"module": …} as the JavaScript
// client sends it), GET returns it, DELETE removes it: GET is then 404 and the edge shows null.
func TestModuleRoutes(t *testing.T) {
	s, a, b := testkit.AppTwoAccounts(t)
	eachKind(t, func(t *testing.T, f family) {
		edge := f.create(t, a, map[string]any{})
		id := edge["id"].(string)
		mods := f.modules(t, a)
		for _, name := range moduleNames(f) {
			path := f.d.Path + "/" + id + "/" + name
			a.Do(t, "GET", path, nil).ExpectError(t, http.StatusNotFound, "", "")
			a.Do(t, "DELETE", path, nil).ExpectError(t, http.StatusNotFound, "", "")
			put := raw(t, a.Do(t, "PUT", path, mods[name].body))
			shown := raw(t, a.Do(t, "GET", f.d.Path+"/"+id, nil))[name]
			if string(compact(t, shown)) != string(compact(t, a.Do(t, "GET", path, nil).Body)) {
				t.Errorf("%s: the edge shows %s, GET of the module %s", name, shown, a.Do(t, "GET", path, nil).Body)
			}
			if b, _ := json.Marshal(put); string(compact(t, b)) != string(compact(t, shown)) {
				t.Errorf("%s: PUT answered %s, the edge shows %s", name, b, shown)
			}
			wrapped := map[string]any{"id": id, "module": mods[name].body}
			if got := a.Do(t, "PUT", path, wrapped); got.Status != http.StatusOK || string(compact(t, got.Body)) != string(compact(t, shown)) {
				t.Errorf("%s: PUT of the JavaScript client's form: %d %s", name, got.Status, got.Body)
			}
			b.Do(t, "GET", path, nil).ExpectError(t, http.StatusNotFound, "", "")
			b.Do(t, "PUT", path, mods[name].body).ExpectError(t, http.StatusNotFound, "", "")
			b.Do(t, "DELETE", path, nil).ExpectError(t, http.StatusNotFound, "", "")
			if res := a.Do(t, "DELETE", path, nil); res.Status != http.StatusNoContent || len(res.Body) != 0 {
				t.Fatalf("%s: DELETE %d %s", name, res.Status, res.Body)
			}
			a.Do(t, "GET", path, nil).ExpectError(t, http.StatusNotFound, "", "")
			a.Do(t, "DELETE", path, nil).ExpectError(t, http.StatusNotFound, "", "")
			if v := raw(t, a.Do(t, "GET", f.d.Path+"/"+id, nil))[name]; string(v) != "null" {
				t.Errorf("%s after DELETE: the edge shows %s", name, v)
			}
			for _, ref := range mods[name].refs {
				if n := refsOf(t, s, a, ref); n != 0 {
					t.Errorf("%s after DELETE: %s has %d references", name, ref, n)
				}
			}
			a.Do(t, "PUT", f.d.Path+"/"+ids.New(f.d.Prefix)+"/"+name, mods[name].body).ExpectError(t, http.StatusNotFound, "", "")
		}
	})
}

// What a module references cannot be deleted while it is stored (IP policy 1420, backend 6502,
// certificate authority, reservation 446); once the edge lets go, it can.
func TestReferencedResourcesCannotBeDeleted(t *testing.T) {
	_, a := testkit.AppAccount(t)
	codes := map[string]string{"backend": "ERR_NGROK_6502", "ip_restriction": "ERR_NGROK_1420", "mutual_tls": "ERR_NGROK_1966"}
	paths := map[string]string{"backend": "/backends/tunnel_group/", "ip_restriction": "/ip_policies/", "mutual_tls": "/certificate_authorities/"}
	eachKind(t, func(t *testing.T, f family) {
		hp, reservation := f.hostport(t, a)
		mods := f.modules(t, a)
		body := map[string]any{"hostports": []string{hp}}
		for name, m := range mods {
			body[name] = m.body
		}
		id := f.create(t, a, body)["id"].(string)
		reservations := "/reserved_domains/"
		if strings.HasPrefix(reservation, ids.ReservedAddr) {
			reservations = "/reserved_addrs/"
		}
		a.Do(t, "DELETE", reservations+reservation, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_446", "id")
		for name, m := range mods {
			for _, ref := range m.refs {
				a.Do(t, "DELETE", paths[name]+ref, nil).ExpectError(t, http.StatusBadRequest, codes[name], "id")
			}
		}
		a.Do(t, "DELETE", f.d.Path+"/"+id, nil).Expect(t, http.StatusNoContent)
		a.Do(t, "DELETE", reservations+reservation, nil).Expect(t, http.StatusNoContent)
		for name, m := range mods {
			for _, ref := range m.refs {
				a.Do(t, "DELETE", paths[name]+ref, nil).Expect(t, http.StatusNoContent)
			}
		}
	})
}

// A hostport belongs to one edge: the second claim is 7122, also when two creates race; a
// PATCH moving hostports releases the old ones.
func TestHostportBelongsToOneEdge(t *testing.T) {
	_, a := testkit.AppAccount(t)
	eachKind(t, func(t *testing.T, f family) {
		hp, _ := f.hostport(t, a)
		first := f.create(t, a, map[string]any{"hostports": []string{hp}})["id"].(string)
		a.Do(t, "POST", f.d.Path, map[string]any{"hostports": []string{hp}}).ExpectError(t, http.StatusBadRequest, edges.CodeHostportTaken, "hostports")
		other := f.create(t, a, map[string]any{})["id"].(string)
		a.Do(t, "PATCH", f.d.Path+"/"+other, map[string]any{"hostports": []string{hp}}).ExpectError(t, http.StatusBadRequest, edges.CodeHostportTaken, "hostports")
		// Moving the hostport off the first edge frees it.
		a.Do(t, "PATCH", f.d.Path+"/"+first, map[string]any{"hostports": []string{}}).Expect(t, http.StatusOK)
		got := a.Do(t, "PATCH", f.d.Path+"/"+other, map[string]any{"hostports": []string{strings.ToUpper(hp)}}).Expect(t, http.StatusOK)
		if fmt.Sprint(got["hostports"]) != fmt.Sprint([]string{hp}) {
			t.Errorf("hostports %v, want [%s] (normalised)", got["hostports"], hp)
		}
		a.Do(t, "DELETE", f.d.Path+"/"+other, nil).Expect(t, http.StatusNoContent)

		// Concurrent creates on one free hostport: exactly one wins.
		race, _ := f.hostport(t, a)
		res := a.RaceWith(t, 8, "POST", f.d.Path, nil, map[string]any{"hostports": []string{race}})
		won := 0
		for _, r := range res {
			switch {
			case r.Status == http.StatusCreated:
				won++
			case r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), edges.CodeHostportTaken):
				t.Errorf("racing create: %d %s", r.Status, r.Body)
			}
		}
		if won != 1 {
			t.Errorf("%d of 8 racing creates of one hostport succeeded", won)
		}
	})
}

// 20 deletes of a backend and of an IP policy race with creates of edges referencing them: no
// edge is left referencing a missing resource, and each survivor's count equals its referrers.
func TestConcurrentDeletesLeaveNoDanglingReference(t *testing.T) {
	s, a := testkit.AppAccount(t)
	eachKind(t, func(t *testing.T, f family) {
		backend, policy := newBackend(t, a), newPolicy(t, a)
		body := map[string]any{"backend": map[string]any{"backend_id": backend}, "ip_restriction": map[string]any{"ip_policy_ids": []string{policy}}}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var created []string
		start := make(chan struct{})
		for i := 0; i < 20; i++ {
			wg.Add(3)
			go func() {
				defer wg.Done()
				<-start
				if res := a.Do(t, "POST", f.d.Path, body); res.Status == http.StatusCreated {
					mu.Lock()
					created = append(created, res.JSON(t)["id"].(string))
					mu.Unlock()
				} else if res.Status != http.StatusBadRequest {
					t.Errorf("create: %d %s", res.Status, res.Body)
				}
			}()
			go func() {
				defer wg.Done()
				<-start
				if res := a.Do(t, "DELETE", "/backends/tunnel_group/"+backend, nil); res.Status >= 500 {
					t.Errorf("backend delete: %d %s", res.Status, res.Body)
				}
			}()
			go func() {
				defer wg.Done()
				<-start
				if res := a.Do(t, "DELETE", "/ip_policies/"+policy, nil); res.Status >= 500 {
					t.Errorf("policy delete: %d %s", res.Status, res.Body)
				}
			}()
		}
		close(start)
		wg.Wait()
		for _, ref := range []string{backend, policy} {
			n := refsOf(t, s, a, ref)
			t.Logf("%s: %d references (-1: deleted), %d edges created", ref, n, len(created))
			if len(created) > 0 && n != int64(len(created)) {
				t.Errorf("%s: %d references for %d edges created against it", ref, n, len(created))
			}
			if len(created) == 0 && n > 0 {
				t.Errorf("%s: %d references, no edge", ref, n)
			}
		}
		for _, id := range created {
			a.Do(t, "DELETE", f.d.Path+"/"+id, nil).Expect(t, http.StatusNoContent)
		}
	})
}

// Every mutation records its event: create, update, each module's PUT and DELETE (updated,
// with the whole edge) and delete.
func TestAuditEvents(t *testing.T) {
	_, a := testkit.AppAccount(t)
	eachKind(t, func(t *testing.T, f family) {
		mods := f.modules(t, a)
		id := f.create(t, a, map[string]any{})["id"].(string)
		path := f.d.Path + "/" + id
		a.Do(t, "PATCH", path, map[string]any{"description": "d"}).Expect(t, http.StatusOK)
		for name, m := range mods {
			a.Do(t, "PUT", path+"/"+name, m.body).Expect(t, http.StatusOK)
			a.Do(t, "DELETE", path+"/"+name, nil).Expect(t, http.StatusNoContent)
		}
		a.Do(t, "DELETE", path, nil).Expect(t, http.StatusNoContent)
		got := map[string]int{}
		for _, ev := range a.AuditLog(t) {
			if strings.Contains(ev.Payload, id) {
				got[ev.EventType]++
			}
		}
		want := map[string]int{audit.Type(f.d.EventKind, "created"): 1, audit.Type(f.d.EventKind, "updated"): 1 + 2*len(mods), audit.Type(f.d.EventKind, "deleted"): 1}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("events %v, want %v", got, want)
		}
	})
}

// GET of an edge with every module is one DynamoDB call (the auth items and the edge in one
// batch); a module PUT is that read and one transaction.
func TestRoundTrips(t *testing.T) {
	s, a := testkit.AppAccount(t)
	eachKind(t, func(t *testing.T, f family) {
		edge, mods := f.full(t, a)
		path := f.d.Path + "/" + edge["id"].(string)
		trips := []testkit.RoundTrip{testkit.Trip("GET with every module", "GET", path, nil, 1)}
		for name, m := range mods {
			trips = append(trips, testkit.Trip("PUT "+name, "PUT", path+"/"+name, m.body, 2), testkit.Trip("GET "+name, "GET", path+"/"+name, nil, 1))
		}
		a.WithinCalls(t, trips...)
		// A PATCH of hostports reads who holds them with the edge and the caller's items.
		hp, _ := f.hostport(t, a)
		got := s.RoundTripsOf(t, func() { a.Do(t, "PATCH", path, map[string]any{"hostports": []string{hp}}).Expect(t, http.StatusOK) })
		if fmt.Sprint(got) != "map[BatchGetItem:1 TransactWriteItems:1]" {
			t.Errorf("PATCH of hostports made DynamoDB calls %v, want one read and one transaction", got)
		}
	})
}

// An edge's hostports are checked against what the process knows of their guards, asserted by
// its one transaction: a stale fact never makes a wrong reference or a wrong refusal. After
// the domain an edge was made on is deleted and reserved by another account, the first
// account's edge on it is refused as another account's (7118) and the new holder's edge
// references its own reservation.
func TestEdgeHostportFactsNeverStale(t *testing.T) {
	s := testkit.App(t)
	a, b := s.NewAccount(t), s.NewAccount(t)
	name, id := a.ReserveDomain(t)
	hp := name + ":443"
	body := map[string]any{"hostports": []string{hp}}
	first := tls.create(t, a, body)["id"].(string)
	a.Do(t, "DELETE", "/edges/tls/"+first, nil).Expect(t, http.StatusNoContent)
	var second map[string]any
	got := s.RoundTripsOf(t, func() { second = tls.create(t, a, body) })
	if want := map[string]int{"TransactWriteItems": 1}; !maps.Equal(got, want) {
		t.Errorf("an edge on a known hostport made DynamoDB calls %v, want %v", got, want)
	}
	a.Do(t, "DELETE", "/reserved_domains/"+id, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_446", "id")
	a.Do(t, "DELETE", "/edges/tls/"+second["id"].(string), nil).Expect(t, http.StatusNoContent)
	a.Do(t, "DELETE", "/reserved_domains/"+id, nil).Expect(t, http.StatusNoContent)
	a.Do(t, "POST", "/edges/tls", body).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_7117", "hostports[0]")
	theirs := b.Do(t, "POST", "/reserved_domains", map[string]any{"domain": name}).Expect(t, http.StatusCreated)["id"].(string)
	a.Do(t, "POST", "/edges/tls", body).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_7118", "hostports[0]")
	edge := tls.create(t, b, body)["id"].(string)
	b.Do(t, "DELETE", "/reserved_domains/"+theirs, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_446", "id")
	b.Do(t, "DELETE", "/edges/tls/"+edge, nil).Expect(t, http.StatusNoContent)
	b.Do(t, "DELETE", "/reserved_domains/"+theirs, nil).Expect(t, http.StatusNoContent)
}

// Edges created on hostports the process knows while their domains are deleted, at once:
// exactly one of each pair wins. Either the edge committed first and references the domain,
// which is then kept (446), or the domain was deleted first and the edge, whose assumed guard
// failed its commit, is refused as on no reservation (7117) and stored nothing.
func TestKnownHostportsAndDomainDeletionsRace(t *testing.T) {
	s := testkit.App(t)
	a := s.NewAccount(t)
	const n = 8
	hps, ids := make([]string, n), make([]string, n)
	for i := range n {
		hps[i], ids[i] = tls.hostport(t, a)
		warm := tls.create(t, a, map[string]any{"hostports": []string{hps[i]}})["id"].(string)
		a.Do(t, "DELETE", "/edges/tls/"+warm, nil).Expect(t, http.StatusNoContent)
	}
	res := testkit.AtOnce(2*n, func(j int) *testkit.Response {
		if j%2 == 0 {
			return a.Do(t, "POST", "/edges/tls", map[string]any{"hostports": []string{hps[j/2]}})
		}
		return a.Do(t, "DELETE", "/reserved_domains/"+ids[j/2], nil)
	})
	created := 0
	for i := range n {
		edge, del := res[2*i], res[2*i+1]
		exists := a.Do(t, "GET", "/reserved_domains/"+ids[i], nil).Status == http.StatusOK
		if edge.Status == http.StatusCreated {
			created++
			del.ExpectError(t, http.StatusBadRequest, "ERR_NGROK_446", "id")
			if !exists {
				t.Errorf("edge on %s created, yet its domain %s is gone", hps[i], ids[i])
			}
			continue
		}
		edge.ExpectError(t, http.StatusBadRequest, "ERR_NGROK_7117", "hostports[0]")
		del.Expect(t, http.StatusNoContent)
		if exists {
			t.Errorf("%s deleted, yet it exists", ids[i])
		}
	}
	if got, _ := a.WalkPages(t, "/edges/tls", "tls_edges"); len(got) != created {
		t.Errorf("%d edges stored, %d created", len(got), created)
	}
	t.Logf("%d of %d edges won against their domain's deletion", created, n)
}
