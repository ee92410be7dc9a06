package ratelimit_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"gopkg.in/yaml.v3"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/ratelimit"
	"tunnelapi/shared/platform/serve"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/benchkit"
	"tunnelapi/shared/testing/testkit"
)

// These tests run against the local stack: the server instances are the service's own handlers
// (serve.Deps from the environment, as a Lambda instance builds them), on one DynamoDB Local
// table.

// templateDefault is RATE_LIMIT as template.yaml deploys it by default: every function that
// sets it (each HTTP function, a test in shared/app holds) sets the RateLimit parameter.
func templateDefault(t testing.TB) string {
	t.Helper()
	const path = "../../../template.yaml"
	set := 0
	for name, f := range testkit.TemplateFunctions(t, path) {
		v, ok := f.Environment.Variables[ratelimit.EnvVar]
		if !ok {
			continue
		}
		set++
		if ref, _ := v.(map[string]any); ref["Ref"] != "RateLimit" {
			t.Fatalf("template.yaml: %s's %s is %v, want the RateLimit parameter", name, ratelimit.EnvVar, v)
		}
	}
	if set == 0 {
		t.Fatalf("template.yaml sets %s for no function", ratelimit.EnvVar)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct {
		Parameters map[string]struct {
			Default string `yaml:"Default"`
		} `yaml:"Parameters"`
	}
	if err := yaml.Unmarshal(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	return tpl.Parameters["RateLimit"].Default
}

func TestTemplateDefault(t *testing.T) {
	def := templateDefault(t)
	p, err := ratelimit.Parse(def)
	if err != nil || p != (ratelimit.Policy{Requests: 120, Window: time.Minute}) {
		t.Fatalf("template default %q parses as %+v, %v; want 120 requests per 60 s", def, p, err)
	}
}

// instance is one server of the service with the rate limit given, on the stack's table.
func instance(t testing.TB, s *testkit.Stack, limit string) (*ratelimit.Limiter, string) {
	t.Helper()
	lim, _, url := instanceWithServer(t, s, limit)
	return lim, url
}

// instanceWithServer is instance with the api.Server its handlers answer through.
func instanceWithServer(t testing.TB, s *testkit.Stack, limit string) (*ratelimit.Limiter, *api.Server, string) {
	t.Helper()
	d, srv := instanceDeps(t, s, limit)
	return d.Limiter, d.Server, srv.URL
}

// instanceDeps is instance's dependencies and server.
func instanceDeps(t testing.TB, s *testkit.Stack, limit string) (*serve.Deps, *httptest.Server) {
	t.Helper()
	old, had := os.LookupEnv(ratelimit.EnvVar)
	os.Setenv(ratelimit.EnvVar, limit)
	d, srv := s.Instance(t, app.Families...)
	if had {
		os.Setenv(ratelimit.EnvVar, old)
	} else {
		os.Unsetenv(ratelimit.EnvVar)
	}
	return d, srv
}

// A request refused for its account's rate limit, and requests refused for their credentials,
// each emit their metric line, which reads back with the counts and codes.
func TestRefusalsEmitMetrics(t *testing.T) {
	s := testkit.Start(t, app.Families...)
	_, srv, url := instanceWithServer(t, s, "2/60")
	var emitted metrics.Buffer
	srv.Metrics = &metrics.Emitter{W: &emitted}
	a := s.NewAccount(t)
	a.Do(t, "GET", url+"/api_keys", nil).Expect(t, http.StatusOK)
	a.Do(t, "GET", url+"/api_keys", nil).Expect(t, http.StatusOK)
	if n := len(metrics.Of(metrics.RateLimited, emitted.Bytes())); n != 0 {
		t.Fatalf("%d rate-limited lines for admitted requests", n)
	}
	a.Do(t, "GET", url+"/api_keys", nil).ExpectError(t, http.StatusTooManyRequests, api.CodeRateLimited, "")
	s.Do(t, "GET", url+"/api_keys", fmt.Sprintf("%027d_%021d", 7, 7), nil)
	s.Do(t, "GET", url+"/api_keys", "", nil)
	limited := metrics.Of(metrics.RateLimited, emitted.Bytes())
	if len(limited) != 1 || limited[0].Values["RateLimitedRequests"] != 1 {
		t.Fatalf("rate-limited lines %+v, want one counting 1", limited)
	}
	codes := map[string]float64{}
	for _, rec := range metrics.Of(metrics.AuthFailure, emitted.Bytes()) {
		codes[rec.Dims[metrics.DimCode]] += rec.Values["AuthenticationFailures"]
	}
	if want := map[string]float64{api.CodeUnknownKey: 1, api.CodeNoAuthHeader: 1}; fmt.Sprint(codes) != fmt.Sprint(want) {
		t.Fatalf("authentication failures by code %v, want %v", codes, want)
	}
}

// The acceptance test with the template's default: 121 requests in a minute from one account,
// the 121st refused with Retry-After, another account unaffected; the Retry-After is the first
// second a request is served again. The instance's clock is held half-way through the current
// minute (and moved on by the test), so how long the requests take does not matter; the counts
// are DynamoDB Local's.
func TestLimitPerAccount(t *testing.T) {
	s := testkit.Start(t, app.Families...)
	lim, url := instance(t, s, templateDefault(t))
	if lim == nil {
		t.Fatal("no limiter with the template's default")
	}
	var now atomic.Int64
	now.Store((time.Now().Unix()/60*60 + 30) * 1000)
	lim.Now = func() time.Time { return time.UnixMilli(now.Load()) }

	a, b := s.NewAccount(t), s.NewAccount(t)
	// Made on the stack's own server, which has no limit: nothing counted yet.
	k := a.Do(t, "POST", "/api_keys", map[string]any{"description": "probe"}).Expect(t, http.StatusCreated)
	get := url + "/api_keys/" + k["id"].(string)
	policy := `"default";q=120;w=60`
	for i := 1; i <= 120; i++ {
		res := a.Do(t, "GET", get, nil)
		res.Expect(t, http.StatusOK)
		if got, want := res.Header.Get("RateLimit"), fmt.Sprintf(`"default";r=%d;`, 120-i); len(got) < len(want) || got[:len(want)] != want {
			t.Fatalf("request %d: RateLimit %q, want %s…", i, got, want)
		}
		if res.Header.Get("RateLimit-Policy") != policy || res.Header.Get("Retry-After") != "" {
			t.Fatalf("request %d: RateLimit-Policy %q Retry-After %q", i, res.Header.Get("RateLimit-Policy"), res.Header.Get("Retry-After"))
		}
	}
	res := a.Do(t, "GET", get, nil)
	res.ExpectError(t, http.StatusTooManyRequests, api.CodeRateLimited, "")
	// 120 in this window: served again once the next window has begun and 1/120 of it has
	// passed (30 s + 0.5 s).
	if res.Header.Get("Retry-After") != "31" || res.Header.Get("RateLimit") != `"default";r=0;t=31` || res.Header.Get("RateLimit-Policy") != policy {
		t.Fatalf("121st: Retry-After %q RateLimit %q RateLimit-Policy %q", res.Header.Get("Retry-After"), res.Header.Get("RateLimit"), res.Header.Get("RateLimit-Policy"))
	}
	// A write over the limit is refused before it commits anything.
	keys := len(a.Do(t, "GET", "/api_keys", nil).Expect(t, http.StatusOK)["keys"].([]any))
	a.Do(t, "POST", url+"/api_keys", map[string]any{"description": "over"}).ExpectError(t, http.StatusTooManyRequests, api.CodeRateLimited, "")
	if n := len(a.Do(t, "GET", "/api_keys", nil).Expect(t, http.StatusOK)["keys"].([]any)); n != keys {
		t.Fatalf("a refused create changed the key count from %d to %d", keys, n)
	}
	// So is a request that would have failed anyway.
	a.Do(t, "PATCH", get, "{").ExpectError(t, http.StatusTooManyRequests, api.CodeRateLimited, "")

	// Another account is unaffected.
	res = b.Do(t, "GET", url+"/api_keys", nil)
	res.Expect(t, http.StatusOK)
	if got := res.Header.Get("RateLimit"); len(got) < 16 || got[:16] != `"default";r=119;` {
		t.Fatalf("other account: RateLimit %q", got)
	}
	// Requests that name no account count against none and have no RateLimit field, but are
	// told the policy.
	for _, token := range []string{"", fmt.Sprintf("%027d_%021d", 7, 7)} {
		res := s.Do(t, "GET", url+"/api_keys", token, nil)
		if res.Status/100 != 4 || res.Status == http.StatusTooManyRequests || res.Header.Get("RateLimit") != "" || res.Header.Get("RateLimit-Policy") != policy {
			t.Fatalf("token %q: %d RateLimit %q RateLimit-Policy %q", token, res.Status, res.Header.Get("RateLimit"), res.Header.Get("RateLimit-Policy"))
		}
	}
	if res := s.Do(t, "GET", url+"/no_such_route", a.Token, nil); res.Status != http.StatusNotFound || res.Header.Get("RateLimit-Policy") != policy {
		t.Fatalf("unknown route: %d RateLimit-Policy %q", res.Status, res.Header.Get("RateLimit-Policy"))
	}
	pre, _ := http.NewRequest(http.MethodOptions, url+"/api_keys", nil)
	pre.Header.Set("Origin", "https://app.example")
	pre.Header.Set("Access-Control-Request-Method", "GET")
	if res, err := http.DefaultClient.Do(pre); err != nil || res.StatusCode != http.StatusNoContent || res.Header.Get("RateLimit-Policy") != policy {
		t.Fatalf("preflight: %v %v", res, err)
	} else {
		res.Body.Close()
	}

	// A second before Retry-After is still too early (and names the one second left); at
	// Retry-After the request is served.
	now.Add(30 * 1000)
	res = a.Do(t, "GET", get, nil)
	res.ExpectError(t, http.StatusTooManyRequests, api.CodeRateLimited, "")
	if res.Header.Get("Retry-After") != "1" {
		t.Fatalf("a second early: Retry-After %q, want 1", res.Header.Get("Retry-After"))
	}
	now.Add(1000)
	res = a.Do(t, "GET", get, nil)
	res.Expect(t, http.StatusOK)
	if got := res.Header.Get("RateLimit"); len(got) < 14 || got[:14] != `"default";r=1;` {
		t.Fatalf("at Retry-After: RateLimit %q, want r=1 (120 − 120·59/60 − 1)", got)
	}
}

// With the limit off (the default of the test stack and make run) no response carries the
// fields.
func TestOff(t *testing.T) {
	s := testkit.App(t)
	if s.Deps.Limiter != nil && os.Getenv(ratelimit.EnvVar) == "" {
		t.Fatal("a limiter without RATE_LIMIT")
	}
	lim, url := instance(t, s, "off")
	if lim != nil {
		t.Fatal("a limiter with RATE_LIMIT=off")
	}
	a := s.NewAccount(t)
	res := a.Do(t, "GET", url+"/api_keys", nil)
	res.Expect(t, http.StatusOK)
	if res.Header.Get("RateLimit") != "" || res.Header.Get("RateLimit-Policy") != "" {
		t.Fatalf("limit off: RateLimit %q RateLimit-Policy %q", res.Header.Get("RateLimit"), res.Header.Get("RateLimit-Policy"))
	}
}

// Concurrent clients spread over several server instances share one limit: a fresh account
// hammered for most of one window gets the limit served, not the limit per instance. Real time
// here: the window is short and the test starts with most of one ahead.
func TestSharedAcrossInstances(t *testing.T) {
	const (
		limit     = 100
		window    = 5 * time.Second
		instances = 3
		clients   = 8
	)
	s := testkit.Start(t, app.Families...)
	var urls []string
	for range instances {
		_, url := instance(t, s, fmt.Sprintf("%d/%d", limit, int(window/time.Second)))
		urls = append(urls, url)
	}
	a := s.NewAccount(t)
	end := time.Now().Truncate(window).Add(window) // Truncate is epoch-aligned for whole seconds
	if time.Until(end) < window*7/10 {
		time.Sleep(time.Until(end) + 20*time.Millisecond)
		end = end.Add(window)
	}
	stop := end.Add(-300 * time.Millisecond)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	var (
		wg                 sync.WaitGroup
		mu                 sync.Mutex
		served, refused    int
		servedBy, failures = map[string]int{}, []string{}
	)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(stop); i++ {
				url := urls[(c+i)%instances]
				req, _ := http.NewRequest("GET", url+"/api_keys?limit=1", nil)
				req.Header.Set("Authorization", "Bearer "+a.Token)
				res, err := client.Do(req)
				if err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				mu.Lock()
				switch {
				case res.StatusCode == http.StatusOK:
					served++
					servedBy[url]++
				case res.StatusCode == http.StatusTooManyRequests && res.Header.Get("Retry-After") != "":
					refused++
				default:
					failures = append(failures, fmt.Sprintf("%d %s", res.StatusCode, res.Header.Get("Retry-After")))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("unexpected responses: %v", failures)
	}
	t.Logf("%d served (%v), %d refused, over %d instances", served, servedBy, refused, instances)
	if refused == 0 {
		t.Fatalf("nothing refused: %d requests were not enough to reach the limit of %d", served, limit)
	}
	if served < limit*95/100 || served > limit*105/100 {
		t.Fatalf("%d served in one window across %d instances; want %d ± 5%%", served, instances, limit)
	}
	if len(servedBy) != instances {
		t.Errorf("served by %d of %d instances", len(servedBy), instances)
	}
}

// BenchmarkGetRateLimitedVsNot: GET /api_keys/{id} through a server with the rate limit on
// (never reached) against one with it off, on the same table (goal: p50 ratio ≤ 1.05). Most
// requests spend a lease the process holds; the one that takes the next lease runs its
// UpdateItem alongside its read. "floor" measures that worst case alone, without the server:
// the request's read and an UpdateItem in parallel against the read by itself.
func BenchmarkGetRateLimitedVsNot(b *testing.B) {
	s := testkit.App(b)
	_, on := instance(b, s, fmt.Sprintf("%d/60", ratelimit.MaxRequests))
	_, off := instance(b, s, "off")
	a := s.NewAccount(b)
	k := a.Do(b, "POST", "/api_keys", map[string]any{"description": "bench"}).Expect(b, http.StatusCreated)
	path := "/api_keys/" + k["id"].(string)
	b.Run("server", func(b *testing.B) {
		benchkit.Compare(b, "get-ratelimited", func() {
			if res := a.Do(b, "GET", on+path, nil); res.Status != http.StatusOK || res.Header.Get("RateLimit") == "" {
				b.Fatalf("GET with the limit on: %d %q", res.Status, res.Header.Get("RateLimit"))
			}
		}, func() {
			if res := a.Do(b, "GET", off+path, nil); res.Status != http.StatusOK {
				b.Fatalf("GET with the limit off: %d", res.Status)
			}
		})
	})
	b.Run("floor", func(b *testing.B) {
		ctx := context.Background()
		keys := []store.Key{store.TokenKey(store.TokenHash(a.Token)), store.AccountKey(a.AccountID), store.ResourceKey(a.AccountID, k["id"].(string))}
		counter := store.RateKey(a.AccountID, 60, 0)
		read := func() {
			if _, err := s.DB.GetMany(ctx, keys...); err != nil {
				b.Fatal(err)
			}
		}
		benchkit.Compare(b, "read-and-count", func() {
			done := make(chan error, 1)
			go func() {
				_, err := s.DB.Add(ctx, counter, "n", 1, time.Now().Add(time.Hour))
				done <- err
			}()
			read()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		}, read)
	})
}

// Refused callers spend none of their account's budget: a deactivated bot's key gets its 403,
// never a 429, however many requests (reads and writes) it sends, and the account's own key is
// then served with its whole quota left but its own request (issue 30, wall 2).
func TestRefusedCallersSpendNoBudget(t *testing.T) {
	s := testkit.Start(t, app.Families...)
	lim, url := instance(t, s, "5/60")
	var now atomic.Int64
	now.Store((time.Now().Unix()/60*60 + 30) * 1000)
	lim.Now = func() time.Time { return time.UnixMilli(now.Load()) }

	a := s.NewAccount(t)
	// Made on the stack's own server, which has no limit.
	bot := a.Do(t, "POST", "/bot_users", map[string]any{"name": "retired"}).Expect(t, http.StatusCreated)["id"].(string)
	token := a.Do(t, "POST", "/api_keys", map[string]any{"owner_id": bot}).Expect(t, http.StatusCreated)["token"].(string)
	a.Do(t, "PATCH", "/bot_users/"+bot, map[string]any{"active": false}).Expect(t, http.StatusOK)

	var counted []string
	for i := 0; i < 12; i++ {
		var res *testkit.Response
		if i%3 == 2 {
			res = s.Do(t, "POST", url+"/api_keys", token, map[string]any{"description": "x"})
		} else {
			res = s.Do(t, "GET", url+"/api_keys", token, nil)
		}
		if res.Status != http.StatusForbidden {
			t.Errorf("refused request %d: %d %s, want 403", i, res.Status, res.Body)
		}
		if h := res.Header.Get("RateLimit"); h != "" {
			counted = append(counted, h)
		}
	}
	res := a.Do(t, "GET", url+"/api_keys", nil)
	res.Expect(t, http.StatusOK)
	if got := res.Header.Get("RateLimit"); !strings.HasPrefix(got, `"default";r=4;`) {
		t.Fatalf("the account's own key after the refused ones: RateLimit %q, want r=4", got)
	}
	if len(counted) > 0 {
		t.Fatalf("refused requests carry RateLimit fields %q; they count against no account", counted)
	}
}

// writeCounter is a store client counting the UpdateItems made through it (a limiter's
// leases and counts).
type writeCounter struct {
	store.Client
	n *atomic.Int64
}

func (c writeCounter) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.n.Add(1)
	return c.Client.UpdateItem(ctx, in, opts...)
}

// BenchmarkRateLimitFourInstances: four instances of the service, each with its own limiter
// (as four Lambda instances of a function), serve GET /api_keys/{id} of one key to 16
// concurrent clients asking for twice the budget, on one DynamoDB Local table. Each request is
// an op; the run is at least three windows. The instances' clock is shared and moved on by each
// request (a twice-the-budget share of a window), so the demand does not depend on how fast the
// machine is. budget-ratio is the requests admitted per whole window over the budget (goal:
// 0.90–1.10); writes/request the limiters' UpdateItems per request.
func BenchmarkRateLimitFourInstances(b *testing.B) {
	const (
		budget    = 50
		window    = time.Minute
		instances = 4
		clients   = 16
	)
	s := testkit.App(b)
	a := s.NewAccount(b)
	k := a.Do(b, "POST", "/api_keys", map[string]any{"description": "bench"}).Expect(b, http.StatusCreated)
	path := "/api_keys/" + k["id"].(string)
	// The clock starts at the next real window (counter items expire after real time) and
	// moves half a budget's share of a window per request.
	step := window / (2 * budget)
	start := time.Now().Truncate(window).Add(window)
	var clock atomic.Int64
	clock.Store(start.UnixMilli())
	var writes atomic.Int64
	var handlers []http.Handler
	for range instances {
		d, _ := instanceDeps(b, s, fmt.Sprintf("%d/%d", budget, int(window/time.Second)))
		lim := d.Limiter
		lim.Now = func() time.Time { return time.UnixMilli(clock.Load()) }
		lim.DB = store.New(writeCounter{lim.DB.Client, &writes}, lim.DB.Table)
		handlers = append(handlers, d.Mux(app.Families...))
	}
	perWindow := int(window / step)
	n := max(b.N, 3*perWindow)
	whole := n / perWindow // windows wholly inside the run
	var (
		next     atomic.Int64
		admitted = make([]atomic.Int64, whole+1)
		mu       sync.Mutex
		failures []string
		wg       sync.WaitGroup
	)
	b.ResetTimer()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				at := clock.Add(step.Milliseconds())
				req, err := testkit.NewRequest("GET", "http://example.com"+path, a.Token, nil)
				if err != nil {
					panic(err)
				}
				req.RemoteAddr = "192.0.2.1:1234"
				rec := httptest.NewRecorder()
				handlers[i%instances].ServeHTTP(rec, req)
				w := int((at - start.UnixMilli()) / window.Milliseconds())
				switch {
				case rec.Code == http.StatusOK && w < len(admitted):
					admitted[w].Add(1)
				case rec.Code == http.StatusOK, rec.Code == http.StatusTooManyRequests:
				default:
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%d %s", rec.Code, rec.Body))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if len(failures) > 0 {
		b.Fatalf("%d unexpected responses, first: %s", len(failures), failures[0])
	}
	var sum int64
	for w := range whole {
		sum += admitted[w].Load()
	}
	b.ReportMetric(float64(sum)/float64(budget*whole), "budget-ratio")
	b.ReportMetric(float64(writes.Load())/float64(n), "writes/request")
}
