package cost_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"tunnelapi/infra/cost"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/frptest"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/frpplugin"
)

// frpHeartbeat is the agents' heartbeat interval a session-hour is priced at: a third of
// TUNNEL_LEASE's default, as make run and the README set it.
const frpHeartbeat = 30 * time.Second

// frpUsages measures the tunnel plugin's requests as its Lambda serves them, through the meter
// m on table: a login; a ping that renews nothing (most of them); a ping that renews the lease
// (one in two at a heartbeat of a third of the lease: renewed when less than half is left);
// and from those two, a session-hour at frpHeartbeat. Each request's log line is counted as
// CloudWatch Logs ingests it.
func frpUsages(b *testing.B, s *testkit.Stack, m *meter, table string, a *testkit.Account, n int) []cost.Usage {
	cfg := testkit.Config(b, config.LoadTunnelPlugin)
	db := store.New(m, table)
	logs := &byteCounter{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	key := frptest.MintKey(b, frptest.OperatorServer(b, s.DB, cfg.Domains.Regions), "cost", cfg.Domains.Regions[0])
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte(key.Name+"."+key.Region+":"+key.Secret))
	plugin := func(lease time.Duration) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return (&frpplugin.Plugin{DB: db, Domains: cfg.Domains, Lease: lease, Log: log}).Lambda()
	}
	// A lease of a nanosecond is renewed by every ping.
	steady, renewing := plugin(cfg.Lease), plugin(time.Nanosecond)
	memory := functionMemoryMB(b, "TunnelPluginFunction")
	sums := map[string]*cost.Usage{}
	var order []string
	send := func(kind string, h func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error), op string, content any) map[string]any {
		body, _ := json.Marshal(map[string]any{"version": "0.1.0", "op": op, "content": content})
		m.take()
		logs.take()
		start := time.Now()
		res, err := h(context.Background(), events.APIGatewayV2HTTPRequest{Version: "2.0", RawPath: "/frp/plugin", RawQueryString: "version=0.1.0&op=" + op, Body: string(body),
			Headers: map[string]string{"authorization": auth, "content-type": "application/json", "host": "api.example.com"},
			RequestContext: events.APIGatewayV2HTTPRequestContext{DomainName: "api.example.com",
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: http.MethodPost, Path: "/frp/plugin", Protocol: "HTTP/1.1", SourceIP: "203.0.113.9"}}})
		dur := time.Since(start)
		read, write, _ := m.take()
		var out map[string]any
		if err == nil {
			err = json.Unmarshal([]byte(res.Body), &out)
		}
		if err != nil || res.StatusCode != http.StatusOK || out["reject"] != false {
			b.Fatalf("%s: %d %s %v", op, res.StatusCode, res.Body, err)
		}
		if kind == "" {
			return out
		}
		u := sums[kind]
		if u == nil {
			u = &cost.Usage{Kind: kind, HTTP: true, MemoryMB: memory}
			sums[kind] = u
			order = append(order, kind)
		}
		u.Invocations++
		u.ReadUnits += read
		u.WriteUnits += write
		u.LogBytes += float64(logs.take() + cost.LogEventOverhead)
		u.Lambda += dur
		return out
	}
	token := a.Do(b, "POST", "/credentials", map[string]any{}).Expect(b, http.StatusCreated)["token"].(string)
	login := map[string]any{"version": "0.70.1", "hostname": "cost", "os": "linux", "arch": "amd64", "privilege_key": "k", "timestamp": 1,
		"metas": map[string]string{"authtoken": token}, "client_address": "198.51.100.7:40000", "pool_count": 1}
	pingOf := func(rewritten map[string]any) map[string]any {
		return map[string]any{"user": map[string]any{"user": "", "metas": rewritten["metas"], "run_id": rewritten["run_id"]}, "privilege_key": "k", "timestamp": 1}
	}
	var ping map[string]any
	for range n {
		ping = pingOf(send("frp login", steady, "Login", login)["content"].(map[string]any))
	}
	// The renewing pings' session of their own, whose lease the first of them finds lapsed.
	lapsing := pingOf(send("", renewing, "Login", login)["content"].(map[string]any))
	for range n {
		send("frp ping", steady, "Ping", ping)
		send("frp ping, renewing", renewing, "Ping", lapsing)
	}
	var out []cost.Usage
	for _, kind := range order {
		u := *sums[kind]
		k := u.Invocations
		u.Invocations, u.ReadUnits, u.WriteUnits, u.LogBytes, u.Lambda = 1, u.ReadUnits/k, u.WriteUnits/k, u.LogBytes/k, u.Lambda/time.Duration(k)
		out = append(out, u)
	}
	// A session-hour: a ping per heartbeat, every other one renewing.
	pings := float64(time.Hour / frpHeartbeat)
	p, r := out[1], out[2]
	out = append(out, cost.Usage{Kind: fmt.Sprintf("frp session-hour (%.0f pings)", pings), HTTP: true, MemoryMB: memory, Invocations: pings,
		ReadUnits: pings / 2 * (p.ReadUnits + r.ReadUnits), WriteUnits: pings / 2 * (p.WriteUnits + r.WriteUnits),
		LogBytes: pings / 2 * (p.LogBytes + r.LogBytes), Lambda: (p.Lambda + r.Lambda) / 2})
	return out
}
