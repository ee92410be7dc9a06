package cost_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"tunnelapi/infra/cost"
	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/ratelimit"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

// memoryMB is the memory size template.yaml gives the function serving path.
func memoryMB(tb testing.TB, path string) int {
	for _, f := range app.Functions() {
		for _, d := range f.Families {
			if d.Path == path {
				return functionMemoryMB(tb, f.Name)
			}
		}
	}
	tb.Fatalf("no family serves %s", path)
	return 0
}

// functionMemoryMB is the memory size template.yaml gives function (its own or the Globals').
func functionMemoryMB(tb testing.TB, function string) int {
	f, ok := testkit.TemplateFunctions(tb, "../../template.yaml")[function]
	if !ok {
		tb.Fatalf("template.yaml declares no function %s", function)
	}
	if f.MemorySize == 0 {
		tb.Fatalf("template.yaml sets no MemorySize for %s", function)
	}
	return f.MemorySize
}

// BenchmarkCostPerRequest measures, for each request kind of a simple family (IP policies) and
// of one that references another (IP policy rules, each naming its policy), the DynamoDB
// capacity the service's calls consumed (ReturnConsumedCapacity TOTAL on each, as DynamoDB Local
// reports it) and the handler's duration in process, with the per-account rate limit on (as the
// template deploys it); then the same for a delivered event and an issued certificate (their
// workers' invocations, queue and KMS calls; workers_test.go) and for frps's plugin requests
// and a tunnel session-hour (frp_test.go), and prints the price of a million of each (package
// cost).
func BenchmarkCostPerRequest(b *testing.B) {
	s := testkit.Start(b, app.Families...)
	old, had := os.LookupEnv(ratelimit.EnvVar)
	os.Setenv(ratelimit.EnvVar, "1000000/60")
	d, _ := s.Instance(b, app.Families...)
	if had {
		os.Setenv(ratelimit.EnvVar, old)
	} else {
		os.Unsetenv(ratelimit.EnvVar)
	}
	m := &meter{Client: d.Kit.DB.Client}
	d.Kit.DB.Client = m
	lines := &byteCounter{}
	d.Server.Metrics = &metrics.Emitter{W: lines}
	h := d.Mux(app.Families...)
	a := s.NewAccount(b)

	type sum struct {
		n           int
		read, write float64
		logBytes    float64
		dur         time.Duration
		path        string
	}
	sums := map[string]*sum{}
	var order []string
	do := func(kind, method, path string, body any, want int) map[string]any {
		req, err := testkit.NewRequest(method, "http://example.com"+path, a.Token, body)
		if err != nil {
			b.Fatal(err)
		}
		req.RemoteAddr = "192.0.2.1:1234" // as httptest.NewRequest has it
		rec := httptest.NewRecorder()
		m.take()
		lines.take()
		start := time.Now()
		h.ServeHTTP(rec, req)
		dur := time.Since(start)
		read, write, calls := m.take()
		logBytes := float64(lines.take())
		if rec.Code != want {
			b.Fatalf("%s %s: %d, want %d: %s", method, path, rec.Code, want, rec.Body)
		}
		if calls > 0 && read+write == 0 {
			b.Fatalf("%s %s: DynamoDB Local reported no consumed capacity for %d calls", method, path, calls)
		}
		if kind != "" {
			sm := sums[kind]
			if sm == nil {
				p, _, _ := strings.Cut(path, "?")
				sm = &sum{path: "/" + strings.Split(p, "/")[1]}
				sums[kind] = sm
				order = append(order, kind)
			}
			sm.n++
			sm.read += read
			sm.write += write
			sm.logBytes += logBytes + cost.LogEventOverhead
			sm.dur += dur
		}
		var out map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		return out
	}
	// bareRead is the GET's floor: its item's consistent GetItem alone, timed in process.
	var bare sum
	bareRead := func(id string) {
		in := &dynamodb.GetItemInput{TableName: aws.String(d.Kit.DB.Table), Key: store.ResourceKey(a.AccountID, id).AV(), ConsistentRead: aws.Bool(true)}
		m.take()
		start := time.Now()
		if _, err := m.GetItem(b.Context(), in); err != nil {
			b.Fatal(err)
		}
		bare.dur += time.Since(start)
		read, _, _ := m.take()
		bare.read += read
		bare.n++
	}
	// Pages of pageSize items: the account holds that many of each before the measured ones.
	const pageSize = 20
	holder := do("", "POST", "/ip_policies", map[string]any{"description": "holder"}, http.StatusCreated)["id"].(string)
	for i := range pageSize - 1 {
		do("", "POST", "/ip_policies", map[string]any{"description": fmt.Sprint("seed ", i)}, http.StatusCreated)
		do("", "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": holder, "cidr": fmt.Sprintf("198.51.100.%d/32", i), "action": "allow"}, http.StatusCreated)
	}
	do("", "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": holder, "cidr": "198.51.100.99/32", "action": "allow"}, http.StatusCreated)
	page := fmt.Sprintf("?limit=%d", pageSize)
	b.ResetTimer()
	for i := range b.N {
		pol := do("ip_policies create", "POST", "/ip_policies", map[string]any{"description": "measured"}, http.StatusCreated)["id"].(string)
		do("ip_policies get", "GET", "/ip_policies/"+pol, nil, http.StatusOK)
		bareRead(pol)
		do(fmt.Sprintf("ip_policies list page (%d)", pageSize), "GET", "/ip_policies"+page, nil, http.StatusOK)
		do("ip_policies update", "PATCH", "/ip_policies/"+pol, map[string]any{"description": "changed"}, http.StatusOK)
		rule := do("ip_policy_rules create", "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": pol,
			"cidr": fmt.Sprintf("10.%d.%d.0/24", i/256%256, i%256), "action": "deny"}, http.StatusCreated)["id"].(string)
		do("ip_policy_rules get", "GET", "/ip_policy_rules/"+rule, nil, http.StatusOK)
		do(fmt.Sprintf("ip_policy_rules list page (%d)", pageSize), "GET", "/ip_policy_rules"+page, nil, http.StatusOK)
		do("ip_policy_rules update", "PATCH", "/ip_policy_rules/"+rule, map[string]any{"description": "changed"}, http.StatusOK)
		do("ip_policy_rules delete", "DELETE", "/ip_policy_rules/"+rule, nil, http.StatusNoContent)
		do("ip_policies delete", "DELETE", "/ip_policies/"+pol, nil, http.StatusNoContent)
	}
	b.StopTimer()
	share := usageShare(b, m, d.Kit.DB.Table, a.AccountID)
	var usages []cost.Usage
	for _, kind := range order {
		sm := sums[kind]
		usages = append(usages, share.add(cost.Usage{Kind: kind, HTTP: true, Invocations: 1, Lambda: sm.dur / time.Duration(sm.n),
			MemoryMB: memoryMB(b, sm.path), ReadUnits: sm.read / float64(sm.n), WriteUnits: sm.write / float64(sm.n),
			LogBytes: sm.logBytes / float64(sm.n)}))
	}
	sort.SliceStable(usages, func(i, j int) bool { return usages[i].Kind < usages[j].Kind })
	if b.N > 1 {
		// A fixed number of each: 20 events (two full batches), 3 certificates (real ACME
		// orders), whatever b.N is.
		// Each writes a usage line too, of the size of these.
		event := metrics.UsageLine(metrics.Usage{Account: a.AccountID, Events: 1})
		cert := metrics.UsageLine(metrics.Usage{Account: a.AccountID, Certificates: 1, Items: 1, ReadUnits: 2, WriteUnits: 28})
		ev, ct := deliveredEvent(b, 20), issuedCertificate(b, 3)
		ev.LogBytes, ct.LogBytes = float64(len(event)+cost.LogEventOverhead), float64(len(cert)+cost.LogEventOverhead)
		usages = append(usages, share.add(ev), share.add(ct))
		// The tunnel plugin's requests (frps's Login and Ping) and a session-hour at a 30 s heartbeat.
		usages = append(usages, frpUsages(b, s, m, d.Kit.DB.Table, a, 20)...)
		var out strings.Builder
		cost.Prices.Print(&out, usages)
		floor := cost.Floor(bare.dur/time.Duration(bare.n), memoryMB(b, "/ip_policies"), bare.read/float64(bare.n))
		for _, u := range usages {
			if u.Kind == "ip_policies get" {
				cost.Prices.PrintVersusFloor(&out, u, floor)
			}
		}
		fmt.Println("\n" + out.String())
	}
}
