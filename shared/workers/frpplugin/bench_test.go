package frpplugin_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/testing/benchkit"
	"tunnelapi/shared/testing/frptest"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/frpplugin"
)

// frpLambda sends frps's plugin request op with content to the plugin's Lambda handler, as API
// Gateway delivers it, with the key's Basic auth, and returns the plugin's answer.
type frpLambda struct {
	handle func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
	auth   string
}

func (l frpLambda) do(b *testing.B, op string, content any) map[string]any {
	body, _ := json.Marshal(map[string]any{"version": "0.1.0", "op": op, "content": content})
	res, err := l.handle(context.Background(), events.APIGatewayV2HTTPRequest{
		Version: "2.0", RawPath: "/frp/plugin", RawQueryString: "version=0.1.0&op=" + op, Body: string(body),
		Headers: map[string]string{"authorization": l.auth, "content-type": "application/json", "host": "api.example.com"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{DomainName: "api.example.com",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: http.MethodPost, Path: "/frp/plugin", Protocol: "HTTP/1.1", SourceIP: "203.0.113.9"}},
	})
	var out map[string]any
	if err == nil {
		err = json.Unmarshal([]byte(res.Body), &out)
	}
	if err != nil || res.StatusCode != http.StatusOK || out["reject"] != false {
		b.Fatalf("%s: %d %s %v", op, res.StatusCode, res.Body, err)
	}
	return out
}

// BenchmarkPlugin measures the plugin's requests as its Lambda serves them against a GET of
// an API key as its Lambda serves it, interleaved (package benchkit): ping, a live session's
// heartbeat (goal ≤ 1.0×: the cheapest request there is), and login, an agent's connection.
func BenchmarkPlugin(b *testing.B) {
	s, a := testkit.AppAccount(b)
	cfg := testkit.Config(b, config.LoadTunnelPlugin)
	p := &frpplugin.Plugin{DB: s.DB, Domains: cfg.Domains, Lease: cfg.Lease, Log: testkit.Logger()}
	key := frptest.MintKey(b, frptest.OperatorServer(b, s.DB, cfg.Domains.Regions), "bench", cfg.Domains.Regions[0])
	l := frpLambda{handle: p.Lambda(), auth: "Basic " + base64.StdEncoding.EncodeToString([]byte(key.Name+"."+key.Region+":"+key.Secret))}
	token := a.Do(b, "POST", "/credentials", map[string]any{}).Expect(b, http.StatusCreated)["token"].(string)
	login := map[string]any{"version": "0.70.1", "hostname": "bench", "os": "linux", "arch": "amd64", "privilege_key": "k", "timestamp": 1,
		"metas": map[string]string{"authtoken": token}, "client_address": "198.51.100.7:40000", "pool_count": 1}
	keyID := a.Do(b, "POST", "/api_keys", map[string]any{"description": "bench"}).Expect(b, http.StatusCreated)["id"].(string)
	get := func() {
		if res := s.DoFrom(b, "203.0.113.7", "GET", "/api_keys/"+keyID, a.Token, nil); res.Status != http.StatusOK {
			b.Fatalf("GET: %d %s", res.Status, res.Body)
		}
	}
	b.Run("ping", func(b *testing.B) {
		rewritten := l.do(b, "Login", login)["content"].(map[string]any)
		user := map[string]any{"user": "", "metas": rewritten["metas"], "run_id": rewritten["run_id"]}
		if id, _ := rewritten["run_id"].(string); !strings.HasPrefix(id, "ts_") {
			b.Fatalf("the login's rewrite carries run_id %v", rewritten["run_id"])
		}
		ping := map[string]any{"user": user, "privilege_key": "k", "timestamp": 1}
		benchkit.Compare(b, "ping", func() { l.do(b, "Ping", ping) }, get)
	})
	b.Run("login", func(b *testing.B) {
		benchkit.Compare(b, "login", func() { l.do(b, "Login", login) }, get)
	})
}
