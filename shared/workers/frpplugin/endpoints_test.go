package frpplugin_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/frpplugin"
)

// ref is the id of the reference member key of obj ("" when it has none).
func ref(obj map[string]any, key string) string {
	r, _ := obj[key].(map[string]any)
	id, _ := r["id"].(string)
	return id
}

// sameSet reports whether got holds exactly want, in any order.
func sameSet(got []string, want ...string) bool {
	return slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want)))
}

// A live tunnel is an ephemeral endpoint of its account, in the platform's shape, listed and
// paged with the account's cloud endpoints (the filter tells them apart), read-only (PATCH and
// DELETE answer the platform's ERR_NGROK_248 and change nothing), and gone with its tunnel;
// another account never sees it.
func TestTunnelIsEphemeralEndpoint(t *testing.T) {
	s, a, b := testkit.AppTwoAccounts(t)
	g := newRig(t, s)
	host, _ := a.ReserveDomain(t)
	cloudHost, _ := a.ReserveDomain(t)
	laterHost, _ := a.ReserveDomain(t)
	token := a.Do(t, "POST", "/credentials", map[string]any{"acl": []string{"bind:" + host}}).Expect(t, http.StatusCreated)["token"].(string)
	policy := `{"on_http_request":[{"actions":[{"type":"custom-response","config":{"status_code":200}}]}]}`
	older := a.Do(t, "POST", "/endpoints", map[string]any{"url": "https://" + cloudHost, "traffic_policy": policy}).Expect(t, http.StatusCreated)["id"].(string)

	_, login := g.login(token, "")
	sid, u := login["run_id"].(string), user(login)
	g.expect(frpplugin.OpNewProxy, proxy(u, "web", "http", `"custom_domains":["`+host+`"]`), false, "")
	newer := a.Do(t, "POST", "/endpoints", map[string]any{"url": "https://" + laterHost, "traffic_policy": policy}).Expect(t, http.StatusCreated)["id"].(string)
	tuns := listIDs(t, a, "/tunnels", "tunnels")
	if len(tuns) != 1 {
		t.Fatalf("tunnels %v, want one", tuns)
	}
	tun := a.Do(t, "GET", "/tunnels/"+tuns[0], nil).Expect(t, http.StatusOK)
	epID := ref(tun, "endpoint")
	if !strings.HasPrefix(epID, "ep_") {
		t.Fatalf("the tunnel's endpoint is %v, want an ep_ ref", tun["endpoint"])
	}
	ep := a.Do(t, "GET", "/endpoints/"+epID, nil).Expect(t, http.StatusOK)
	want := map[string]any{"id": epID, "type": "ephemeral", "url": "http://" + host, "public_url": "http://" + host, "proto": "http",
		"hostport": host + ":80", "region": "us", "pooling_enabled": false, "uri": a.URL("/endpoints/" + epID)}
	for k, v := range want {
		if fmt.Sprint(ep[k]) != fmt.Sprint(v) {
			t.Errorf("endpoint %s = %v, want %v (%v)", k, ep[k], v, ep)
		}
	}
	if ref(ep, "tunnel") != tuns[0] || ref(ep, "tunnel_session") != sid {
		t.Errorf("endpoint refs tunnel %v session %v, want %s %s", ep["tunnel"], ep["tunnel_session"], tuns[0], sid)
	}
	if _, ok := ep["traffic_policy"]; ok {
		t.Errorf("an ephemeral endpoint shows a traffic policy: %v", ep)
	}

	// Listed with the cloud endpoints made before and after it (in id order, which within a
	// second is not creation order), on pages of one alike, and told apart by the filter.
	all := listIDs(t, a, "/endpoints", "endpoints")
	if !sameSet(all, newer, epID, older) {
		t.Errorf("endpoints %v, want %s %s %s", all, newer, epID, older)
	}
	if paged, pages := a.WalkPages(t, "/endpoints?limit=1", "endpoints"); !slices.Equal(paged, all) || pages < 3 {
		t.Errorf("endpoints on pages of one %v (%d pages), want %v", paged, pages, all)
	}
	if ids := listIDs(t, a, `/endpoints?filter=obj.type+%3D%3D+%22ephemeral%22`, "endpoints"); !slices.Equal(ids, []string{epID}) {
		t.Errorf("ephemeral endpoints by filter %v, want [%s]", ids, epID)
	}
	if ids := listIDs(t, a, `/endpoints?filter=obj.type+%3D%3D+%22cloud%22`, "endpoints"); !sameSet(ids, newer, older) {
		t.Errorf("cloud endpoints by filter %v, want [%s %s]", ids, newer, older)
	}

	// Read-only, and the account's own.
	a.Do(t, "PATCH", "/endpoints/"+epID, map[string]any{"metadata": "x"}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_248", "id")
	a.Do(t, "DELETE", "/endpoints/"+epID, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_248", "id")
	if again := a.Do(t, "GET", "/endpoints/"+epID, nil).Expect(t, http.StatusOK); fmt.Sprint(again) != fmt.Sprint(ep) {
		t.Errorf("a refused PATCH or DELETE changed the endpoint: %v, was %v", again, ep)
	}
	b.Do(t, "GET", "/endpoints/"+epID, nil).Expect(t, http.StatusNotFound)
	if ids := listIDs(t, b, "/endpoints", "endpoints"); len(ids) != 0 {
		t.Errorf("another account lists endpoints %v", ids)
	}

	// Gone with its tunnel.
	g.expect(frpplugin.OpCloseProxy, `{"user":`+u+`,"proxy_name":"web"}`, false, "")
	a.Do(t, "GET", "/endpoints/"+epID, nil).Expect(t, http.StatusNotFound)
	if ids := listIDs(t, a, "/endpoints", "endpoints"); !sameSet(ids, newer, older) {
		t.Errorf("endpoints after the tunnel closed %v, want [%s %s]", ids, newer, older)
	}
	// And with its session.
	g.expect(frpplugin.OpNewProxy, proxy(u, "web", "http", `"custom_domains":["`+host+`"]`), false, "")
	if ids := listIDs(t, a, "/endpoints?filter=obj.type+%3D%3D+%22ephemeral%22", "endpoints"); len(ids) != 1 {
		t.Fatalf("ephemeral endpoints after the proxy reopened %v", ids)
	}
	a.Do(t, "POST", "/tunnel_sessions/"+sid+"/stop", nil).Expect(t, http.StatusNoContent)
	g.expect(frpplugin.OpPing, ping(u), true, "stopped")
	if ids := listIDs(t, a, "/endpoints", "endpoints"); !sameSet(ids, newer, older) {
		t.Errorf("endpoints after the session ended %v, want [%s %s]", ids, newer, older)
	}
}

// frpc reconnecting with its session's id opens its proxies again on the new connection, while
// frps reports the old connection's proxies closed, in either order: a late close of the old
// connection leaves the tunnel the new one reopened, and a close of the new one ends it.
func TestReconnectOutlivesLateClose(t *testing.T) {
	s, a := testkit.AppAccount(t)
	g := newRig(t, s)
	host, _ := a.ReserveDomain(t)
	token := a.Do(t, "POST", "/credentials", map[string]any{"acl": []string{"bind:" + host}}).Expect(t, http.StatusCreated)["token"].(string)
	web := `"custom_domains":["` + host + `"]`

	_, first := g.login(token, "")
	sid, old := first["run_id"].(string), user(first)
	g.expect(frpplugin.OpNewProxy, proxy(old, "web", "http", web), false, "")
	tuns := listIDs(t, a, "/tunnels", "tunnels")

	// The new connection's NewProxy first, then the old one's late CloseProxy.
	res, second := g.login(token, sid)
	if res.Reject || second["run_id"] != sid {
		t.Fatalf("reconnect answered %+v %v", res, second)
	}
	cur := user(second)
	if cur == old {
		t.Fatalf("the reconnect's rewrite is the first login's: %s", cur)
	}
	g.expect(frpplugin.OpNewProxy, proxy(cur, "web", "http", web), false, "")
	g.expect(frpplugin.OpCloseProxy, `{"user":`+old+`,"proxy_name":"web"}`, false, "")
	if got := listIDs(t, a, "/tunnels", "tunnels"); !slices.Equal(got, tuns) {
		t.Fatalf("after a late close of the replaced connection the tunnels are %v, want %v", got, tuns)
	}
	if ids := listIDs(t, a, "/endpoints", "endpoints"); len(ids) != 1 {
		t.Errorf("after a late close of the replaced connection the endpoints are %v", ids)
	}

	// The other order: the old connection's close first ends the tunnel; the new NewProxy opens
	// another.
	_, third := g.login(token, sid)
	newest := user(third)
	g.expect(frpplugin.OpCloseProxy, `{"user":`+cur+`,"proxy_name":"web"}`, false, "")
	if got := listIDs(t, a, "/tunnels", "tunnels"); len(got) != 0 {
		t.Fatalf("a close of the connection that opened the tunnel left %v", got)
	}
	g.expect(frpplugin.OpNewProxy, proxy(newest, "web", "http", web), false, "")
	reopened := listIDs(t, a, "/tunnels", "tunnels")
	if len(reopened) != 1 || reopened[0] == tuns[0] {
		t.Fatalf("tunnels after the reopen %v", reopened)
	}
	// A close of the current connection ends it.
	g.expect(frpplugin.OpCloseProxy, `{"user":`+newest+`,"proxy_name":"web"}`, false, "")
	if got := listIDs(t, a, "/tunnels", "tunnels"); len(got) != 0 {
		t.Errorf("the current connection's close left %v", got)
	}
	if ids := listIDs(t, a, "/endpoints", "endpoints"); len(ids) != 0 {
		t.Errorf("the current connection's close left endpoints %v", ids)
	}
}

// A tunnel group backend lists, in get and list, the live tunnels whose labels (the proxy's
// metas) include all of its own, of its account only; a tunnel leaves it when it closes.
func TestTunnelGroupBackendListsLiveTunnels(t *testing.T) {
	s, a, b := testkit.AppTwoAccounts(t)
	g := newRig(t, s)
	host, _ := a.ReserveDomain(t)
	other, _ := a.ReserveDomain(t)
	token := a.Do(t, "POST", "/credentials", map[string]any{"acl": []string{"bind:" + host, "bind:" + other}}).Expect(t, http.StatusCreated)["token"].(string)
	web := a.Do(t, "POST", "/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "web"}}).Expect(t, http.StatusCreated)["id"].(string)
	db := a.Do(t, "POST", "/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "db"}}).Expect(t, http.StatusCreated)["id"].(string)
	theirs := b.Do(t, "POST", "/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "web"}}).Expect(t, http.StatusCreated)["id"].(string)

	_, login := g.login(token, "")
	u := user(login)
	g.expect(frpplugin.OpNewProxy, proxy(u, "web", "http", `"custom_domains":["`+host+`"],"metas":{"app":"web","dc":"x"}`), false, "")
	g.expect(frpplugin.OpNewProxy, proxy(u, "other", "http", `"custom_domains":["`+other+`"],"metas":{"app":"api"}`), false, "")
	var tunnel string
	for _, it := range a.Do(t, "GET", "/tunnels", nil).Expect(t, http.StatusOK)["tunnels"].([]any) {
		if tn := it.(map[string]any); tn["public_url"] == "http://"+host {
			tunnel = tn["id"].(string)
		}
	}
	tunnelsOf := func(obj map[string]any) []string {
		var out []string
		for _, r := range obj["tunnels"].([]any) {
			out = append(out, r.(map[string]any)["id"].(string))
		}
		return out
	}
	listed := func(acct *testkit.Account) map[string][]string {
		out := map[string][]string{}
		for _, it := range acct.Do(t, "GET", "/backends/tunnel_group", nil).Expect(t, http.StatusOK)["backends"].([]any) {
			obj := it.(map[string]any)
			out[obj["id"].(string)] = tunnelsOf(obj)
		}
		return out
	}
	if got := tunnelsOf(a.Do(t, "GET", "/backends/tunnel_group/"+web, nil).Expect(t, http.StatusOK)); !slices.Equal(got, []string{tunnel}) {
		t.Errorf("GET of the web backend lists tunnels %v, want [%s]", got, tunnel)
	}
	if got := listed(a); !slices.Equal(got[web], []string{tunnel}) || len(got[db]) != 0 {
		t.Errorf("the backends list shows tunnels %v, want [%s] for %s and none for %s", got, tunnel, web, db)
	}
	if got := tunnelsOf(b.Do(t, "GET", "/backends/tunnel_group/"+theirs, nil).Expect(t, http.StatusOK)); len(got) != 0 {
		t.Errorf("another account's backend of the same labels lists %v", got)
	}
	g.expect(frpplugin.OpCloseProxy, `{"user":`+u+`,"proxy_name":"web"}`, false, "")
	if got := tunnelsOf(a.Do(t, "GET", "/backends/tunnel_group/"+web, nil).Expect(t, http.StatusOK)); len(got) != 0 {
		t.Errorf("after the tunnel closed the backend lists %v", got)
	}
}
