package testkit

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/workers/frpplugin"
	"tunnelapi/shared/workers/operator"
)

// AgentSession has a tunnel server report an agent of a: a key minted, a credential and a
// reserved domain made, a login and an http proxy on the domain sent to the plugin as frps
// sends them. It returns the session's and the tunnel's ids.
func AgentSession(t testing.TB, s *Stack, a *Account) (session, tunnel string) {
	t.Helper()
	c := Config(t, config.LoadTunnelPlugin)
	p := &frpplugin.Plugin{DB: s.DB, Domains: c.Domains, Lease: time.Minute, Log: Logger()}
	key, err := operator.MintTunnelServer(t.Context(), s.DB, "sample", c.Domains.Regions[0])
	if err != nil {
		t.Fatal(err)
	}
	domain, _ := a.ReserveDomain(t)
	token := a.Do(t, "POST", "/credentials", map[string]any{}).Expect(t, http.StatusCreated)["token"].(string)
	send := func(op, content string) frpplugin.Response {
		req := httptest.NewRequest(http.MethodPost, "/frp/plugin?op="+op+"&version=0.1.0",
			strings.NewReader(`{"version":"0.1.0","op":"`+op+`","content":`+content+`}`))
		req.SetBasicAuth(key.Name+"."+key.Region, key.Secret)
		w := httptest.NewRecorder()
		p.ServeHTTP(w, req)
		var res frpplugin.Response
		if err := json.Unmarshal(w.Body.Bytes(), &res); w.Code != http.StatusOK || err != nil || res.Reject {
			t.Fatalf("%s answered %d %s", op, w.Code, w.Body)
		}
		return res
	}
	login := send(frpplugin.OpLogin, `{"version":"0.70.1","os":"linux","arch":"amd64","metas":{"authtoken":"`+token+`"},"client_address":"127.0.0.1:40000"}`)
	var rewritten struct {
		RunID string            `json:"run_id"`
		Metas map[string]string `json:"metas"`
	}
	b, _ := json.Marshal(login.Content)
	if err := json.Unmarshal(b, &rewritten); err != nil {
		t.Fatal(err)
	}
	user, _ := json.Marshal(map[string]any{"user": "", "metas": rewritten.Metas, "run_id": rewritten.RunID})
	send(frpplugin.OpNewProxy, `{"user":`+string(user)+`,"proxy_name":"web","proxy_type":"http","custom_domains":["`+domain+`"]}`)
	var list struct {
		Tunnels []struct {
			ID string `json:"id"`
		} `json:"tunnels"`
	}
	if err := json.Unmarshal(a.Do(t, "GET", "/tunnels", nil).Body, &list); err != nil || len(list.Tunnels) == 0 {
		t.Fatalf("no tunnel listed after the proxy (%v)", err)
	}
	return rewritten.RunID, list.Tunnels[0].ID
}
