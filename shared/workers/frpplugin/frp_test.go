package frpplugin_test

// The acceptance of issue 38 with real frp: frps v0.70.1 asks this package's plugin (served
// beside a test stack, frptest.Plane) about real frpc agents, and the tenants' API lists what
// they reported. Every wait polls with a generous deadline, except the one bound the issue
// sets: a stopped session's traffic and listings end within 5 s (agents beat every second).

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/faults"
	"tunnelapi/shared/testing/frptest"
	"tunnelapi/shared/testing/testkit"
)

// frpStopBound is how soon a stopped session's tunnels stop serving and leave the listings.
const frpStopBound = 5 * time.Second

// frpUpstream is a local web server that answers every request with its name and the Host.
func frpUpstream(t *testing.T, name string) int {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s saw %s", name, r.Host)
	}))
	t.Cleanup(s.Close)
	return s.Listener.Addr().(*net.TCPAddr).Port
}

// frpCredential creates a tunnel credential with acl in a and returns its id and token.
func frpCredential(t *testing.T, a *testkit.Account, acl ...string) (id, token string) {
	t.Helper()
	body := map[string]any{"description": "frpc"}
	if acl != nil {
		body["acl"] = acl
	}
	c := a.Do(t, "POST", "/credentials", body).Expect(t, http.StatusCreated)
	return c["id"].(string), c["token"].(string)
}

// frpServes waits until host answers through the plane's vhost port with the upstream's body.
func frpServes(t *testing.T, p *frptest.Plane, host, upstream string) {
	t.Helper()
	frptest.Eventually(t, frptest.Patience, func() error {
		if code, body := p.Get(host, "/"); code != http.StatusOK || body != upstream+" saw "+host {
			return fmt.Errorf("GET %s through frps: %d %q", host, code, body)
		}
		return nil
	})
}

// frpListed returns the ids a's list at path holds (under key).
func frpListed(t *testing.T, a *testkit.Account, path, key string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, v := range a.Do(t, "GET", path, nil).Expect(t, http.StatusOK)[key].([]any) {
		out = append(out, v.(map[string]any))
	}
	return out
}

// frpGone polls, within bound, until host no longer serves (404 from frps, or frps gone) and a
// lists no session, tunnel or ephemeral endpoint; sweep, when set, runs before each look.
func frpGone(t *testing.T, p *frptest.Plane, a *testkit.Account, host string, bound time.Duration, sweep func()) {
	t.Helper()
	frptest.Eventually(t, bound, func() error {
		if sweep != nil {
			sweep()
		}
		if code, body := p.Get(host, "/"); code == http.StatusOK {
			return fmt.Errorf("%s still serves: %q", host, body)
		}
		if l := frpListed(t, a, "/tunnel_sessions", "tunnel_sessions"); len(l) != 0 {
			return fmt.Errorf("sessions still listed: %v", l)
		}
		if l := frpListed(t, a, "/tunnels", "tunnels"); len(l) != 0 {
			return fmt.Errorf("tunnels still listed: %v", l)
		}
		if l := frpListed(t, a, "/endpoints?filter=obj.type+%3D%3D+%22ephemeral%22", "endpoints"); len(l) != 0 {
			return fmt.Errorf("ephemeral endpoints still listed: %v", l)
		}
		return nil
	})
}

// frpBackendTunnels are the tunnel ids a's tunnel group backend id lists.
func frpBackendTunnels(t *testing.T, a *testkit.Account, id string) []string {
	t.Helper()
	var out []string
	for _, r := range a.Do(t, "GET", "/backends/tunnel_group/"+id, nil).Expect(t, http.StatusOK)["tunnels"].([]any) {
		out = append(out, r.(map[string]any)["id"].(string))
	}
	return out
}

// A credential whose ACL binds a reserved host serves it through frps; the session and the
// tunnel are listed as frpc reported them (its run id, version, os, address) to their account
// and to no other, the tunnel as an ephemeral endpoint too and in the tunnel group backend its
// labels match; proxies for a host reserved by another account or outside the ACL are
// refused with the reason in frpc's log; stop ends traffic and listings within 5 s and the
// agent's reconnects stay refused; restart brings a new session that serves; deleting the
// credential ends the session.
func TestFrpSessionLifecycle(t *testing.T) {
	s, a := testkit.AppAccount(t)
	other := s.NewAccount(t)
	p := frptest.StartPlane(t, s, frptest.PlaneConfig{})
	host, _ := a.ReserveDomain(t)
	outside, _ := a.ReserveDomain(t)
	taken, _ := other.ReserveDomain(t)
	credID, token := frpCredential(t, a, "bind:"+host, "bind:"+taken)
	up := frpUpstream(t, "upstream")
	group := a.Do(t, "POST", "/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "web"}}).Expect(t, http.StatusCreated)["id"].(string)
	elsewhere := a.Do(t, "POST", "/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "db"}}).Expect(t, http.StatusCreated)["id"].(string)

	agent := p.Agent(t, token,
		frptest.Proxy{Name: "web", Type: "http", LocalPort: up, CustomDomains: []string{host}, Metadatas: map[string]string{"app": "web"}},
		frptest.Proxy{Name: "taken", Type: "http", LocalPort: up, CustomDomains: []string{taken}},
		frptest.Proxy{Name: "outside", Type: "http", LocalPort: up, CustomDomains: []string{outside}})
	session := agent.WaitLogin(t)
	if !strings.HasPrefix(session, "ts_") {
		t.Fatalf("frpc's run id is %q, want the session id the plugin gave it", session)
	}
	agent.WaitProxy(t, "web")
	if why := agent.ProxyRefusal(t, "taken"); !strings.Contains(why, taken+" is reserved by another account") {
		t.Errorf("the proxy of another account's host was refused as %q", why)
	}
	if why := agent.ProxyRefusal(t, "outside"); !strings.Contains(why, "ACL does not allow binding "+outside) {
		t.Errorf("the proxy outside the ACL was refused as %q", why)
	}
	frpServes(t, p, host, "upstream")

	sessions := frpListed(t, a, "/tunnel_sessions", "tunnel_sessions")
	if len(sessions) != 1 {
		t.Fatalf("sessions listed: %v, want frpc's", sessions)
	}
	got := a.Do(t, "GET", "/tunnel_sessions/"+session, nil).Expect(t, http.StatusOK)
	cred, _ := got["credential"].(map[string]any)
	if got["id"] != session || sessions[0]["id"] != session || got["agent_version"] != "0.70.1" || got["os"] != "linux" ||
		!strings.HasPrefix(fmt.Sprint(got["ip"]), "127.0.0.1") || cred["id"] != credID || got["region"] != p.Key.Region {
		t.Errorf("the session as listed %v and got %v: want frpc's run id %s, version 0.70.1, os linux, ip 127.0.0.1, credential %s, region %s",
			sessions[0], got, session, credID, p.Key.Region)
	}
	tunnels := frpListed(t, a, "/tunnels", "tunnels")
	if len(tunnels) != 1 {
		t.Fatalf("tunnels listed: %v, want the one proxy admitted", tunnels)
	}
	tunnelID := tunnels[0]["id"].(string)
	tun := a.Do(t, "GET", "/tunnels/"+tunnelID, nil).Expect(t, http.StatusOK)
	ref, _ := tun["tunnel_session"].(map[string]any)
	if tun["public_url"] != "http://"+host || tun["proto"] != "http" || ref["id"] != session {
		t.Errorf("the tunnel %v: want public_url http://%s, proto http, session %s", tun, host, session)
	}
	// While it serves, the tunnel is an ephemeral endpoint and in the backend its labels match.
	epRef, _ := tun["endpoint"].(map[string]any)
	epID, _ := epRef["id"].(string)
	ep := a.Do(t, "GET", "/endpoints/"+epID, nil).Expect(t, http.StatusOK)
	epTunnel, _ := ep["tunnel"].(map[string]any)
	epSession, _ := ep["tunnel_session"].(map[string]any)
	if ep["type"] != "ephemeral" || ep["url"] != "http://"+host || epTunnel["id"] != tunnelID || epSession["id"] != session {
		t.Errorf("the tunnel's endpoint %v: want an ephemeral endpoint of http://%s, tunnel %s, session %s", ep, host, tunnelID, session)
	}
	if l := frpListed(t, a, "/endpoints", "endpoints"); len(l) != 1 || l[0]["id"] != epID {
		t.Errorf("endpoints listed %v, want the tunnel's %s", l, epID)
	}
	if got := frpBackendTunnels(t, a, group); len(got) != 1 || got[0] != tunnelID {
		t.Errorf("the tunnel group backend of app=web lists %v, want [%s]", got, tunnelID)
	}
	if got := frpBackendTunnels(t, a, elsewhere); len(got) != 0 {
		t.Errorf("the tunnel group backend of app=db lists %v", got)
	}

	// Another account sees none of it.
	other.Do(t, "GET", "/tunnel_sessions/"+session, nil).Expect(t, http.StatusNotFound)
	other.Do(t, "GET", "/tunnels/"+tunnelID, nil).Expect(t, http.StatusNotFound)
	other.Do(t, "GET", "/endpoints/"+epID, nil).Expect(t, http.StatusNotFound)
	if l := frpListed(t, other, "/endpoints", "endpoints"); len(l) != 0 {
		t.Errorf("another account lists endpoints %v", l)
	}
	if l := frpListed(t, other, "/tunnel_sessions", "tunnel_sessions"); len(l) != 0 {
		t.Errorf("another account lists sessions %v", l)
	}
	if l := frpListed(t, other, "/tunnels", "tunnels"); len(l) != 0 {
		t.Errorf("another account lists tunnels %v", l)
	}

	// Stop: the next heartbeat ends it, and frpc's reconnects with its id are refused.
	a.Do(t, "POST", "/tunnel_sessions/"+session+"/stop", nil).Expect(t, http.StatusNoContent)
	frpGone(t, p, a, host, frpStopBound, nil)
	if got := frpBackendTunnels(t, a, group); len(got) != 0 {
		t.Errorf("after the stop the tunnel group backend lists %v", got)
	}
	agent.WaitLine(t, "ts_") // the refused reconnect's reason names the session
	refusedBefore := strings.Count(agent.Log(), "connect to server error")
	frptest.Eventually(t, frptest.Patience, func() error {
		if n := strings.Count(agent.Log(), "connect to server error"); n <= refusedBefore {
			return fmt.Errorf("no refused reconnect after the stop yet")
		}
		return nil
	})
	if l := frpListed(t, a, "/tunnel_sessions", "tunnel_sessions"); len(l) != 0 {
		t.Errorf("a stopped agent's reconnect came back as %v", l)
	}
	agent.Kill()

	// Restart: the agent comes back as a new session, which serves.
	agent = p.Agent(t, token, frptest.Proxy{Name: "web", Type: "http", LocalPort: up, CustomDomains: []string{host}})
	first := agent.WaitLogin(t)
	agent.WaitProxy(t, "web")
	frpServes(t, p, host, "upstream")
	a.Do(t, "POST", "/tunnel_sessions/"+first+"/restart", nil).Expect(t, http.StatusNoContent)
	var next string
	frptest.Eventually(t, frptest.Patience, func() error {
		l := frpListed(t, a, "/tunnel_sessions", "tunnel_sessions")
		if len(l) != 1 || l[0]["id"] == first {
			return fmt.Errorf("sessions after restart: %v", l)
		}
		next = l[0]["id"].(string)
		return nil
	})
	frpServes(t, p, host, "upstream")
	if l := frpListed(t, a, "/tunnels", "tunnels"); len(l) != 1 || l[0]["tunnel_session"].(map[string]any)["id"] != next {
		t.Errorf("tunnels after restart: %v, want one of session %s", l, next)
	}

	// Deleting the credential ends the session at its next heartbeat.
	a.Do(t, "DELETE", "/credentials/"+credID, nil).Expect(t, http.StatusNoContent)
	frpGone(t, p, a, host, frptest.Patience, nil)
}

// A bad authtoken makes frpc exit non-zero with the plugin's reason; an agent IP restriction
// of the account that denies 127.0.0.0/8 refuses the login the same way.
func TestFrpLoginRefused(t *testing.T) {
	s, a := testkit.AppAccount(t)
	p := frptest.StartPlane(t, s, frptest.PlaneConfig{})
	bad := p.Agent(t, "not-a-token")
	if code := bad.Wait(t); code == 0 {
		t.Errorf("frpc with a bad authtoken exited 0:\n%s", bad.Log())
	}
	if !strings.Contains(bad.Log(), "not the token of a tunnel credential") {
		t.Errorf("frpc's log lacks the refusal's reason:\n%s", bad.Log())
	}

	_, token := frpCredential(t, a)
	pol := a.Do(t, "POST", "/ip_policies", map[string]any{"description": "no loopback agents"}).Expect(t, http.StatusCreated)["id"].(string)
	a.Do(t, "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": pol, "cidr": "127.0.0.0/8", "action": "deny"}).Expect(t, http.StatusCreated)
	a.Do(t, "POST", "/ip_restrictions", map[string]any{"type": "agent", "enforced": true, "ip_policy_ids": []string{pol}}).Expect(t, http.StatusCreated)
	denied := p.Agent(t, token)
	if code := denied.Wait(t); code == 0 {
		t.Errorf("frpc from a denied address exited 0:\n%s", denied.Log())
	}
	if !strings.Contains(denied.Log(), "127.0.0.1") {
		t.Errorf("frpc's log lacks the refusal naming its address:\n%s", denied.Log())
	}
	if l := frpListed(t, a, "/tunnel_sessions", "tunnel_sessions"); len(l) != 0 {
		t.Errorf("refused logins left sessions %v", l)
	}
}

// With DynamoDB cut off from the plugin for 10 s (every connection to it reset), an
// established tunnel keeps serving and its session stays: heartbeats of a known session are
// admitted while the store is unreachable.
func TestFrpServesThroughADynamoDBCut(t *testing.T) {
	s, a := testkit.AppAccount(t)
	fs := faults.NewStore(t, "dynamodb-frp", testkit.Config(t, config.LoadHTTP).AWSConfig(), store.Options{Table: s.DB.Table})
	p := frptest.StartPlane(t, s, frptest.PlaneConfig{DB: fs.Open(t)})
	host, _ := a.ReserveDomain(t)
	_, token := frpCredential(t, a, "bind:"+host)
	agent := p.Agent(t, token, frptest.Proxy{Name: "web", Type: "http", LocalPort: frpUpstream(t, "upstream"), CustomDomains: []string{host}})
	session := agent.WaitLogin(t)
	agent.WaitProxy(t, "web")
	frpServes(t, p, host, "upstream")

	fs.Proxy.Add(t, faults.Toxic{Type: "reset_peer", Stream: "upstream", Toxicity: 1, Attributes: map[string]any{"timeout": 0}})
	cut := time.Now()
	served := 0
	for time.Since(cut) < 10*time.Second {
		if code, body := p.Get(host, "/"); code != http.StatusOK || body != "upstream saw "+host {
			t.Fatalf("%s into the cut, GET %s: %d %q", time.Since(cut).Round(time.Millisecond), host, code, body)
		}
		served++
		time.Sleep(250 * time.Millisecond)
	}
	fs.Proxy.Clear()
	if strings.Contains(agent.Log(), "pong message contains error") {
		t.Errorf("a heartbeat was refused during the cut:\n%s", agent.Log())
	}
	if l := frpListed(t, a, "/tunnel_sessions", "tunnel_sessions"); len(l) != 1 || l[0]["id"] != session {
		t.Errorf("after the cut the sessions are %v, want %s", l, session)
	}
	frpServes(t, p, host, "upstream")
	t.Logf("%d requests served through the 10 s cut", served)
}
