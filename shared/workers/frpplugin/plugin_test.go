package frpplugin_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/faults"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/frpplugin"
	"tunnelapi/shared/workers/operator"
	"tunnelapi/shared/workers/scheduler"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// rig is a plugin on the test stack with a tunnel-server key, sending what frps sends.
type rig struct {
	t      *testing.T
	s      *testkit.Stack
	p      *frpplugin.Plugin
	key    operator.TunnelServer
	domain string // the deployment's base domain
}

// revokeServer revokes the tunnel server key id through the operator API, as an operator does.
func revokeServer(t *testing.T, s *testkit.Stack, id string) {
	t.Helper()
	o := &operator.Operator{DB: s.DB}
	mux := http.NewServeMux()
	o.Register(mux, func(*http.Request, []byte) error { return nil })
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest(http.MethodDelete, "/operator/tunnel_servers/"+id, nil))
	if w.Code != http.StatusNoContent {
		t.Fatalf("revoking answered %d %s", w.Code, w.Body)
	}
}

func newRig(t *testing.T, s *testkit.Stack) *rig {
	c := testkit.Config(t, config.LoadTunnelPlugin)
	p := &frpplugin.Plugin{DB: s.DB, Domains: c.Domains, Lease: time.Minute, Log: testkit.Logger()}
	key, err := operator.MintTunnelServer(t.Context(), s.DB, "edge-1", "us")
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, s: s, p: p, key: key, domain: c.Domains.BaseDomain}
}

// send posts op with content as frps's HTTP plugin does (its query, body and Basic credentials
// from the addr URL) and returns the status and the decoded answer.
func (g *rig) send(op, content string) (int, frpplugin.Response, []byte) {
	g.t.Helper()
	return g.sendAs(g.key.Name+"."+g.key.Region, g.key.Secret, op, content)
}

func (g *rig) sendAs(user, secret, op, content string) (int, frpplugin.Response, []byte) {
	g.t.Helper()
	body := `{"version":"0.1.0","op":"` + op + `","content":` + content + `}`
	req := httptest.NewRequest(http.MethodPost, "http://api.test/frp/plugin?op="+op+"&version=0.1.0", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Frp-Reqid", "r1")
	req.SetBasicAuth(user, secret)
	w := httptest.NewRecorder()
	g.p.ServeHTTP(w, req)
	var res frpplugin.Response
	if w.Code == http.StatusOK {
		if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
			g.t.Fatalf("%s answered %s: %v", op, w.Body, err)
		}
	}
	return w.Code, res, w.Body.Bytes()
}

// login sends frpc's Login as frps forwards it (msg.Login with client_address) and returns the
// rewritten content.
func (g *rig) login(authtoken, runID string) (frpplugin.Response, map[string]any) {
	g.t.Helper()
	run := ""
	if runID != "" {
		run = `"run_id":"` + runID + `",`
	}
	content := `{"version":"0.70.1","hostname":"","os":"linux","arch":"amd64","privilege_key":"5d2d0b","timestamp":1765100000,` +
		run + `"metas":{"authtoken":"` + authtoken + `","metadata":"{\"site\":1}"},"pool_count":1,"client_address":"127.0.0.1:51234"}`
	status, res, body := g.send(frpplugin.OpLogin, content)
	if status != http.StatusOK {
		g.t.Fatalf("Login answered %d %s", status, body)
	}
	var rewritten map[string]any
	if !res.Reject {
		b, _ := json.Marshal(res.Content)
		json.Unmarshal(b, &rewritten)
	}
	return res, rewritten
}

// user is the user member later requests carry: the login's rewritten metas and run id.
func user(login map[string]any) string {
	b, _ := json.Marshal(map[string]any{"user": "", "metas": login["metas"], "run_id": login["run_id"]})
	return string(b)
}

func (g *rig) expect(op, content string, reject bool, reason string) frpplugin.Response {
	g.t.Helper()
	status, res, body := g.send(op, content)
	if status != http.StatusOK {
		g.t.Fatalf("%s answered %d %s", op, status, body)
	}
	if res.Reject != reject || !strings.Contains(res.RejectReason, reason) {
		g.t.Fatalf("%s answered %+v, want reject %v with %q", op, res, reject, reason)
	}
	return res
}

func proxy(u, name, typ, binding string) string {
	return `{"user":` + u + `,"proxy_name":"` + name + `","proxy_type":"` + typ + `",` + binding + `}`
}

func ping(u string) string {
	return `{"user":` + u + `,"privilege_key":"5d2d0b","timestamp":1765100030}`
}

// listIDs are the ids of a list page of path.
func listIDs(t *testing.T, a *testkit.Account, path, key string) []string {
	t.Helper()
	var ids []string
	for _, it := range a.Do(t, "GET", path, nil).Expect(t, http.StatusOK)[key].([]any) {
		ids = append(ids, it.(map[string]any)["id"].(string))
	}
	return ids
}

// An agent's life as frps reports it: a login with a credential's authtoken becomes a session
// listed with frpc's version, os and address under the id the rewrite gave frps; proxies are
// admitted as the ACL and the reservations allow and listed as tunnels; heartbeats are
// admitted; stop and restart take effect at the next heartbeat; deleting the credential ends
// the session; another account sees none of it.
func TestAgentLifecycle(t *testing.T) {
	s, a, b := testkit.AppTwoAccounts(t)
	g := newRig(t, s)
	mine, _ := a.ReserveDomain(t)
	theirs, _ := b.ReserveDomain(t)
	addr, _ := a.ReserveAddr(t)
	cred := a.Do(t, "POST", "/credentials", map[string]any{"acl": []string{"bind:" + mine, "bind:" + theirs, "bind:" + addr}}).Expect(t, http.StatusCreated)
	token, credID := cred["token"].(string), cred["id"].(string)

	res, login := g.login(token, "")
	if res.Reject || res.Unchange {
		t.Fatalf("login answered %+v", res)
	}
	sid, _ := login["run_id"].(string)
	metas, _ := login["metas"].(map[string]any)
	if !strings.HasPrefix(sid, "ts_") || metas["authtoken"] != credID || metas["account_id"] != a.AccountID ||
		login["privilege_key"] != "5d2d0b" || login["pool_count"] != float64(1) || login["os"] != "linux" {
		t.Fatalf("rewritten login %v", login)
	}
	if strings.Contains(fmt.Sprint(login), token) {
		t.Fatalf("the rewritten login still carries the authtoken: %v", login)
	}
	got := a.Do(t, "GET", "/tunnel_sessions/"+sid, nil).Expect(t, http.StatusOK)
	want := map[string]any{"id": sid, "agent_version": "0.70.1", "os": "linux", "ip": "127.0.0.1", "region": "us", "transport": "frp", "metadata": `{"site":1}`}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("session %s is %v, want %v (%v)", k, got[k], v, got)
		}
	}
	if ref, _ := got["credential"].(map[string]any); ref["id"] != credID {
		t.Errorf("session credential %v, want %s", got["credential"], credID)
	}
	if ids := listIDs(t, a, "/tunnel_sessions", "tunnel_sessions"); len(ids) != 1 || ids[0] != sid {
		t.Fatalf("sessions listed %v, want [%s]", ids, sid)
	}
	u := user(login)

	t.Run("proxies", func(t *testing.T) {
		g.expect(frpplugin.OpNewProxy, proxy(u, "web", "http", `"custom_domains":["`+mine+`"],"metas":{"team":"a"}`), false, "")
		g.expect(frpplugin.OpNewProxy, proxy(u, "theirs", "http", `"custom_domains":["`+theirs+`"]`), true, "reserved by another account")
		g.expect(frpplugin.OpNewProxy, proxy(u, "outside", "http", `"custom_domains":["outside.example.net"]`), true, "ACL does not allow binding outside.example.net")
		g.expect(frpplugin.OpNewProxy, proxy(u, "udp", "udp", `"remote_port":9000`), true, "not served")
		port := addr[strings.LastIndexByte(addr, ':')+1:]
		g.expect(frpplugin.OpNewProxy, proxy(u, "db", "tcp", `"remote_port":`+port), false, "")
		g.expect(frpplugin.OpNewProxy, proxy(u, "db2", "tcp", `"remote_port":1`), true, "not the port of a reserved address")
		tunnels := a.Do(t, "GET", "/tunnels", nil).Expect(t, http.StatusOK)["tunnels"].([]any)
		byURL := map[string]map[string]any{}
		for _, it := range tunnels {
			tn := it.(map[string]any)
			byURL[tn["public_url"].(string)] = tn
			if ref, _ := tn["tunnel_session"].(map[string]any); ref["id"] != sid {
				t.Errorf("tunnel %v is not on session %s", tn, sid)
			}
		}
		web, db := byURL["http://"+mine], byURL["tcp://"+addr]
		if len(tunnels) != 2 || web == nil || db == nil || web["proto"] != "http" || db["proto"] != "tcp" ||
			fmt.Sprint(web["labels"]) != "map[team:a]" {
			t.Fatalf("tunnels %v", tunnels)
		}
		a.Do(t, "GET", "/tunnels/"+web["id"].(string), nil).Expect(t, http.StatusOK)
		b.Do(t, "GET", "/tunnels/"+web["id"].(string), nil).Expect(t, http.StatusNotFound)
		g.expect(frpplugin.OpCloseProxy, `{"user":`+u+`,"proxy_name":"web"}`, false, "")
		a.Do(t, "GET", "/tunnels/"+web["id"].(string), nil).Expect(t, http.StatusNotFound)
	})

	t.Run("another account sees nothing", func(t *testing.T) {
		b.Do(t, "GET", "/tunnel_sessions/"+sid, nil).Expect(t, http.StatusNotFound)
		b.Do(t, "POST", "/tunnel_sessions/"+sid+"/stop", nil).Expect(t, http.StatusNotFound)
		b.Do(t, "POST", "/tunnel_sessions/"+sid+"/update", nil).Expect(t, http.StatusNotFound)
		if ids := listIDs(t, b, "/tunnel_sessions", "tunnel_sessions"); len(ids) != 0 {
			t.Fatalf("the other account lists sessions %v", ids)
		}
		if ids := listIDs(t, b, "/tunnels", "tunnels"); len(ids) != 0 {
			t.Fatalf("the other account lists tunnels %v", ids)
		}
	})

	g.expect(frpplugin.OpPing, ping(u), false, "")
	a.Do(t, "POST", "/tunnel_sessions/"+sid+"/update", map[string]any{"id": sid}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_806", "id")

	t.Run("reconnect continues the session", func(t *testing.T) {
		res, again := g.login(token, sid)
		if res.Reject || again["run_id"] != sid {
			t.Fatalf("reconnect answered %+v", res)
		}
	})

	t.Run("stop", func(t *testing.T) {
		a.Do(t, "POST", "/tunnel_sessions/"+sid+"/stop", map[string]any{"id": sid}).Expect(t, http.StatusNoContent)
		g.expect(frpplugin.OpPing, ping(u), true, "stopped through the API")
		a.Do(t, "GET", "/tunnel_sessions/"+sid, nil).Expect(t, http.StatusNotFound)
		if ids := listIDs(t, a, "/tunnels", "tunnels"); len(ids) != 0 {
			t.Fatalf("tunnels %v outlive their stopped session", ids)
		}
		if res, _ := g.login(token, sid); !res.Reject || !strings.Contains(res.RejectReason, "stopped") {
			t.Fatalf("a reconnect of the stopped session answered %+v", res)
		}
	})

	t.Run("restart", func(t *testing.T) {
		_, l2 := g.login(token, "")
		s2 := l2["run_id"].(string)
		a.Do(t, "POST", "/tunnel_sessions/"+s2+"/restart", nil).Expect(t, http.StatusNoContent)
		g.expect(frpplugin.OpPing, ping(user(l2)), true, "restart")
		res, l3 := g.login(token, s2)
		if res.Reject || l3["run_id"] == s2 || !strings.HasPrefix(l3["run_id"].(string), "ts_") {
			t.Fatalf("the restarted agent's login answered %+v %v", res, l3)
		}
		if ids := listIDs(t, a, "/tunnel_sessions", "tunnel_sessions"); len(ids) != 1 || ids[0] != l3["run_id"] {
			t.Fatalf("sessions %v after restart, want [%s]", ids, l3["run_id"])
		}
		g.expect(frpplugin.OpPing, ping(user(l3)), false, "")
		// Deleting the credential ends the session at its next heartbeat.
		a.Do(t, "DELETE", "/credentials/"+credID, nil).Expect(t, http.StatusNoContent)
		g.expect(frpplugin.OpPing, ping(user(l3)), true, "was deleted")
		if ids := listIDs(t, a, "/tunnel_sessions", "tunnel_sessions"); len(ids) != 0 {
			t.Fatalf("sessions %v outlive their credential", ids)
		}
		if res, _ := g.login(token, ""); !res.Reject || !strings.Contains(res.RejectReason, "not the token of a tunnel credential") {
			t.Fatalf("a deleted credential's login answered %+v", res)
		}
	})
}

// Refusals: a login without an authtoken or with a bad one, an unknown or revoked server key
// (401, which frps counts as a refusal), an account's enforced agent IP restriction.
func TestRefusals(t *testing.T) {
	s, a := testkit.AppAccount(t)
	g := newRig(t, s)
	token := a.Do(t, "POST", "/credentials", map[string]any{}).Expect(t, http.StatusCreated)["token"].(string)
	if res, _ := g.login("", ""); !res.Reject || !strings.Contains(res.RejectReason, "no authtoken") {
		t.Fatalf("a login without authtoken answered %+v", res)
	}
	if res, _ := g.login("2abcNotAToken_xyz", ""); !res.Reject || !strings.Contains(res.RejectReason, "not the token of a tunnel credential") {
		t.Fatalf("a bad authtoken answered %+v", res)
	}
	for name, creds := range map[string][2]string{
		"unknown secret": {"edge-1.us", "nope"},
		"other name":     {"edge-2.us", g.key.Secret},
		"other region":   {"edge-1.eu", g.key.Secret},
		"malformed user": {"edge-1", g.key.Secret},
		"an API token":   {"edge-1.us", a.Token},
	} {
		if status, _, _ := g.sendAs(creds[0], creds[1], frpplugin.OpPing, `{"user":{"run_id":"ts_x"}}`); status != http.StatusUnauthorized {
			t.Errorf("%s: Ping answered %d, want 401", name, status)
		}
	}
	// A revoked key's next request is refused.
	revokeServer(t, s, g.key.ID)
	if status, _, _ := g.send(frpplugin.OpLogin, `{"version":"0.70.1","metas":{"authtoken":"`+token+`"},"client_address":"127.0.0.1:1"}`); status != http.StatusUnauthorized {
		t.Fatalf("a revoked key's Login answered %d, want 401", status)
	}
	g = newRig(t, s)
	// An enforced agent restriction denying 127.0.0.0/8 refuses the login.
	pol := a.Do(t, "POST", "/ip_policies", map[string]any{}).Expect(t, http.StatusCreated)["id"].(string)
	a.Do(t, "POST", "/ip_policy_rules", map[string]any{"cidr": "127.0.0.0/8", "action": "deny", "ip_policy_id": pol}).Expect(t, http.StatusCreated)
	a.Do(t, "POST", "/ip_policy_rules", map[string]any{"cidr": "0.0.0.0/0", "action": "allow", "ip_policy_id": pol}).Expect(t, http.StatusCreated)
	if res, _ := g.login(token, ""); res.Reject {
		t.Fatalf("a login without agent restriction answered %+v", res)
	}
	a.Do(t, "POST", "/ip_restrictions", map[string]any{"type": "agent", "enforced": true, "ip_policy_ids": []string{pol}}).Expect(t, http.StatusCreated)
	if res, _ := g.login(token, ""); !res.Reject || !strings.Contains(res.RejectReason, "ERR_NGROK_115") {
		t.Fatalf("a login from a denied address answered %+v", res)
	}
	// Bad requests are 4xx with the envelope, never a refusal that looks like a rule.
	for _, body := range []string{`not json`, `{"version":"0.1.0","op":"Login"}`, `{"version":"0.1.0","op":"Nope","content":{}}`} {
		req := httptest.NewRequest(http.MethodPost, "/frp/plugin", bytes.NewReader([]byte(body)))
		req.SetBasicAuth("edge-1.us", g.key.Secret)
		w := httptest.NewRecorder()
		g.p.ServeHTTP(w, req)
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "ERR_NGROK_") {
			t.Errorf("%s answered %d %s", body, w.Code, w.Body)
		}
	}
}

// A session whose heartbeats stop (frps killed) is swept by the scheduler once its lease
// lapses, with its tunnels; before that the sweep leaves it alone, and its later heartbeat is
// refused, so the agent logs in again as a new session.
func TestLapsedLeaseSwept(t *testing.T) {
	s, a := testkit.AppAccount(t)
	g := newRig(t, s)
	g.p.Lease = 30 * time.Second
	domain, _ := a.ReserveDomain(t)
	token := a.Do(t, "POST", "/credentials", map[string]any{}).Expect(t, http.StatusCreated)["token"].(string)
	_, login := g.login(token, "")
	u := user(login)
	g.expect(frpplugin.OpNewProxy, proxy(u, "web", "http", `"custom_domains":["`+domain+`"]`), false, "")
	sweeper := &scheduler.Scheduler{DB: s.DB}
	if _, err := sweeper.Sweep(t.Context(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if ids := listIDs(t, a, "/tunnel_sessions", "tunnel_sessions"); len(ids) != 1 {
		t.Fatalf("sessions %v within the lease", ids)
	}
	// The table is shared with the package's other tests, whose sessions lapse too.
	if n, err := sweeper.Sweep(t.Context(), time.Now().Add(time.Minute)); err != nil || n < 1 {
		t.Fatalf("a sweep after the lease ended %d sessions (%v), want this one at least", n, err)
	}
	if ids := listIDs(t, a, "/tunnel_sessions", "tunnel_sessions"); len(ids) != 0 {
		t.Fatalf("sessions %v after their lease lapsed", ids)
	}
	if ids := listIDs(t, a, "/tunnels", "tunnels"); len(ids) != 0 {
		t.Fatalf("tunnels %v after their session's lease lapsed", ids)
	}
	g.expect(frpplugin.OpPing, ping(u), true, "has ended")
	if res, again := g.login(token, login["run_id"].(string)); res.Reject || again["run_id"] == login["run_id"] {
		t.Fatalf("the swept agent's reconnect answered %+v %v, want a new session", res, again)
	}
}

// With DynamoDB cut off (every connection to it reset, through the faults proxy), a heartbeat
// of a known session is admitted, so an established tunnel never drops, while a login and a
// proxy are refused with the reason; a stop requested meanwhile applies at the first heartbeat
// once the store is back.
func TestHeartbeatsOutliveTheStore(t *testing.T) {
	s, a := testkit.AppAccount(t)
	g := newRig(t, s)
	fs := faults.NewStore(t, "dynamodb-plugin", testkit.Config(t, config.LoadTunnelPlugin).AWSConfig(), store.Options{Table: s.DB.Table})
	g.p.DB, g.p.Budget = fs.Open(t), 2*time.Second
	domain, _ := a.ReserveDomain(t)
	token := a.Do(t, "POST", "/credentials", map[string]any{}).Expect(t, http.StatusCreated)["token"].(string)
	_, login := g.login(token, "")
	u := user(login)
	g.expect(frpplugin.OpNewProxy, proxy(u, "web", "http", `"custom_domains":["`+domain+`"]`), false, "")

	fs.Proxy.Add(t, faults.Toxic{Type: "reset_peer", Stream: "upstream", Toxicity: 1, Attributes: map[string]any{"timeout": 0}})
	a.Do(t, "POST", "/tunnel_sessions/"+login["run_id"].(string)+"/stop", nil).Expect(t, http.StatusNoContent)
	g.expect(frpplugin.OpPing, ping(u), false, "")
	g.expect(frpplugin.OpNewProxy, proxy(u, "web2", "http", `"custom_domains":["`+domain+`"]`), true, "cannot reach its store")
	if res, _ := g.login(token, ""); !res.Reject || !strings.Contains(res.RejectReason, "cannot reach its store") {
		t.Fatalf("a login without the store answered %+v", res)
	}
	fs.Proxy.Clear()
	g.expect(frpplugin.OpPing, ping(u), true, "stopped through the API")
}

// Suspending the account ends its sessions at their next heartbeat, and refuses its logins.
func TestSuspendedAccount(t *testing.T) {
	s, a := testkit.AppAccount(t)
	g := newRig(t, s)
	token := a.Do(t, "POST", "/credentials", map[string]any{}).Expect(t, http.StatusCreated)["token"].(string)
	_, login := g.login(token, "")
	g.expect(frpplugin.OpPing, ping(user(login)), false, "")
	mux := http.NewServeMux()
	(&operator.Operator{DB: s.DB}).Register(mux, func(*http.Request, []byte) error { return nil })
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/operator/tenants/"+a.AccountID+"/suspend", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("suspending answered %d %s", w.Code, w.Body)
	}
	g.expect(frpplugin.OpPing, ping(user(login)), true, "is suspended")
	if res, _ := g.login(token, ""); !res.Reject || !strings.Contains(res.RejectReason, "suspended") {
		t.Fatalf("a suspended account's login answered %+v", res)
	}
}
