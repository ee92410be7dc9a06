package usage_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/certs"
	"tunnelapi/shared/workers/delivery"
	"tunnelapi/shared/workers/usage"
)

// script is a scripted mix of requests and what it must count: the requests it made by family
// and status class, its mutations and the resources it left stored.
type script struct {
	t         *testing.T
	a         *testkit.Account
	requests  map[string]map[string]int64
	mutations int64
	items     int64
}

// do sends a request of family expecting status; items is what it stores (+1 a create, -1 a
// delete).
func (s *script) do(family, method, path string, body any, status int, items int64) map[string]any {
	s.t.Helper()
	out := s.a.Do(s.t, method, path, body).Expect(s.t, status)
	if s.requests[family] == nil {
		s.requests[family] = map[string]int64{}
	}
	s.requests[family][usage.Class(status)]++
	if status < 300 && method != http.MethodGet {
		s.mutations++
	}
	s.items += items
	return out
}

// After a scripted mix of requests across families (creates, reads, updates, deletes, refusals
// with a 4xx), an event delivered to a destination and a certificate issued, the account's day
// as Days reads it equals what the script made; its capacity is what the usage lines carried
// (what DynamoDB reported for the calls), and neither another account's request nor an
// unauthenticated one is counted for it.
func TestDayEqualsTheScript(t *testing.T) {
	testkit.Require(t, "ACME_DIRECTORY", "CHALLTESTSRV_URL")
	k := testkit.StartSinks(t)
	s := k.Stack
	var lines metrics.Buffer
	s.Metrics.W = io.MultiWriter(s.Metrics.W, &lines)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })

	// The event worker and the certificate worker, writing to the stack's emitter.
	events := delivery.New(s.DB, s.Queues.Client, s.Deps.Kit.Seal, k.Worker.AWSConfig(), k.Worker)
	events.Log, events.Metrics = testkit.Logger(), s.Metrics
	wg.Go(func() { events.Poll(ctx, 10) })
	jobs := testkit.NewQueues(t, nil)
	t.Cleanup(s.RunReader(certs.JobsConsumer.To(jobs.Events), nil))
	cc := testkit.Config(t, config.LoadCertWorker)
	cc.QueueURL = jobs.Events
	cw, err := certs.New(s.DB, jobs.Client, s.Deps.Kit.Seal, cc, testkit.Logger())
	if err != nil {
		t.Fatal(err)
	}
	cw.Metrics = s.Metrics
	wg.Go(func() { queue.Poll(ctx, jobs.Client, jobs.Events, 5, testkit.Logger(), cw.Handle) })

	a, b := s.NewAccount(t), s.NewAccount(t)
	sc := &script{t: t, a: a, requests: map[string]map[string]int64{}}
	dest := sc.do("event_destinations", "POST", "/event_destinations", map[string]any{"target": k.KinesisTarget("usage")}, 201, 1)["id"].(string)
	sc.do("event_subscriptions", "POST", "/event_subscriptions", map[string]any{"sources": []any{map[string]any{"type": "ip_policy_updated.v0"}},
		"destination_ids": []string{dest}}, 201, 1)
	pol := sc.do("ip_policies", "POST", "/ip_policies", map[string]any{"description": "billed"}, 201, 1)["id"].(string)
	sc.do("ip_policies", "GET", "/ip_policies/"+pol, nil, 200, 0)
	sc.do("ip_policies", "PATCH", "/ip_policies/"+pol, map[string]any{"description": "changed"}, 200, 0) // the event delivered
	rule := sc.do("ip_policy_rules", "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": pol, "cidr": "10.1.0.0/16", "action": "allow"}, 201, 1)["id"].(string)
	sc.do("ip_policy_rules", "GET", "/ip_policy_rules/"+rule, nil, 200, 0)
	sc.do("ip_policy_rules", "GET", "/ip_policy_rules/ipr_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc", nil, 404, 0)
	sc.do("ip_policy_rules", "PATCH", "/ip_policy_rules/"+rule, map[string]any{"cidr": "not a cidr"}, 400, 0)
	sc.do("ip_policy_rules", "DELETE", "/ip_policy_rules/"+rule, nil, 204, -1)
	key := sc.do("api_keys", "POST", "/api_keys", map[string]any{"description": "temporary"}, 201, 1)["id"].(string)
	sc.do("api_keys", "GET", "/api_keys", nil, 200, 0)
	sc.do("api_keys", "DELETE", "/api_keys/"+key, nil, 204, -1)
	sc.do("api_keys", "DELETE", "/api_keys/"+key, nil, 404, 0)
	// A certificate issued: a reserved domain whose _acme-challenge points where it says, then
	// its certificate management policy; the issued certificate is a resource stored.
	name := testkit.UniqueName("billed", "example.com")
	dom := sc.do("reserved_domains", "POST", "/reserved_domains", map[string]any{"domain": name}, 201, 1)
	target := strings.Replace(dom["cname_target"].(string), ".", ".acme.", 1)
	if err := (certs.ChallTestSrv{URL: os.Getenv("CHALLTESTSRV_URL")}).SetCNAME(ctx, "_acme-challenge."+name, target); err != nil {
		t.Fatal(err)
	}
	domID := dom["id"].(string)
	// Its certificate, once issued, is a resource stored too.
	sc.do("reserved_domains", "PATCH", "/reserved_domains/"+domID, map[string]any{"certificate_management_policy": map[string]any{}}, 200, 1)
	// Neither an unauthenticated request nor another account's counts for a.
	s.Do(t, "GET", "/api_keys", "", nil).Expect(t, 401)
	b.Do(t, "GET", "/api_keys", nil).Expect(t, 200)

	waitFor(t, 60*time.Second, "the certificate and the event", func() bool {
		d := sc.do("reserved_domains", "GET", "/reserved_domains/"+domID, nil, 200, 0)
		return d["certificate"] != nil && len(k.Stand.Kinesis.Received()) > 0
	})
	time.Sleep(time.Second) // room for a duplicate delivery to show up, if there were one
	if err := s.Usage.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	today := time.Now().UTC().Format(usage.DayFormat)
	days, err := usage.Days(ctx, s.DB, a.AccountID, today, today)
	if err != nil || len(days) != 1 {
		t.Fatalf("days %+v, %v; want today's", days, err)
	}
	got := days[0]
	if !equalCounts(got.Requests, sc.requests) {
		t.Errorf("requests %v, want %v", got.Requests, sc.requests)
	}
	if got.Mutations != sc.mutations || got.ItemsStored != sc.items || got.EventsDelivered != 1 || got.CertificatesIssued != 1 {
		t.Errorf("mutations %d items %d events %d certificates %d, want %d %d 1 1", got.Mutations, got.ItemsStored,
			got.EventsDelivered, got.CertificatesIssued, sc.mutations, sc.items)
	}
	var read, write float64
	for line := range strings.Lines(string(lines.Bytes())) {
		if u, err := metrics.ParseUsage([]byte(line)); err == nil && u.Account == a.AccountID {
			read, write = read+u.ReadUnits, write+u.WriteUnits
		}
	}
	if got.ReadUnits <= 0 || got.WriteUnits <= 0 || !near(got.ReadUnits, read) || !near(got.WriteUnits, write) {
		t.Errorf("capacity %v read %v write units, want the lines' %v and %v, more than 0", got.ReadUnits, got.WriteUnits, read, write)
	}
	if bd, err := usage.Days(ctx, s.DB, b.AccountID, today, today); err != nil || len(bd) != 1 || bd[0].Total("") != 1 || bd[0].Mutations != 0 {
		t.Errorf("the other account's day: %+v, %v; want its one read", bd, err)
	}
	if none, err := usage.Days(ctx, s.DB, a.AccountID, "2000-01-01", "2000-01-31"); err != nil || len(none) != 0 {
		t.Errorf("days of January 2000: %+v, %v", none, err)
	}
}

func equalCounts(a, b map[string]map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for f, byClass := range a {
		if len(byClass) != len(b[f]) {
			return false
		}
		for c, n := range byClass {
			if b[f][c] != n {
				return false
			}
		}
	}
	return true
}

func near(a, b float64) bool { return a-b < 1e-6 && b-a < 1e-6 }

// waitFor polls cond until it holds, failing after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
