package coldstart

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"tunnelapi/infra/samlocal"
	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/samples"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/certs"
	"tunnelapi/shared/workers/delivery"
	"tunnelapi/shared/workers/frpplugin"
	"tunnelapi/shared/workers/operator"
	"tunnelapi/shared/workers/scheduler"
	"tunnelapi/shared/workers/usage"
)

// Every function's deployment zip, built as `make build` builds it (for this machine's
// architecture: the emulator cannot run arm64 here) and unzipped, runs under the official Lambda
// Runtime Interface Emulator with its environment from template.yaml (pointed at the test
// stack, as `make sam-local` points it) and answers each of its sample events as the local
// server answers the same request: an HTTP function walks its samples in name order beside a
// walk of the same samples through the local server (each on an account of its own), and each
// answer must match the server's in status, headers and body, ids and times aside; a worker,
// and the operator's function, answer each of their samples as their handler built in process
// from the same environment does.
func TestZipsAnswerSamplesUnderTheEmulator(t *testing.T) {
	st := testkit.App(t) // skips (fails under REQUIRE_STACK) without the stack
	begin := time.Now()
	tasks := deployZips(t, runtime.GOARCH)
	t.Logf("built, zipped and unzipped every function in %v", time.Since(begin).Round(time.Millisecond))
	rie := emulatorPath(t)
	env, limits := functionEnvironments(t, st)
	for _, f := range app.Functions() {
		t.Run(f.Dir, func(t *testing.T) {
			t.Parallel()
			e := startEmulator(t, rie, filepath.Join(tasks, f.Dir), append(lambdaEnvironment(f.Name, limits[f.Name].Timeout, limits[f.Name].MemorySize), env[f.Name]...))
			files, err := app.SampleFiles("../..", f.Dir)
			if err != nil {
				t.Fatal(err)
			}
			lam, loc := newWalk(t, st, f.Dir), newWalk(t, st, f.Dir)
			for _, file := range files {
				raw, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				var res events.APIGatewayV2HTTPResponse
				if err := json.Unmarshal(e.invoke(t, []byte(app.FillSample(string(raw), lam.vars))), &res); err != nil {
					t.Fatalf("%s: the function's answer is not an HTTP API response: %v", file, err)
				}
				got := lambdaAnswer(t, res)
				want := loc.serve(t, st, app.FillSample(string(raw), loc.vars))
				name := filepath.Base(file)
				var ev events.APIGatewayV2HTTPRequest
				if err := json.Unmarshal(raw, &ev); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if documented := app.SampleStatusOf(f.Families, ev.RequestContext.HTTP.Method, ev.RouteKey); got.status != documented {
					t.Fatalf("%s: status %d under the emulator, want %d: %s", name, got.status, documented, got.body)
				}
				if got.status != want.status {
					t.Fatalf("%s: status %d under the emulator, %d from the local server:\n%s\n%s", name, got.status, want.status, got.body, want.body)
				}
				if g, w := lam.normalize(got.body), loc.normalize(want.body); g != w {
					t.Errorf("%s: body under the emulator:\n%s\nfrom the local server:\n%s", name, g, w)
				}
				for _, h := range sameHeaders {
					if g, w := lam.normalize(got.header.Get(h)), loc.normalize(want.header.Get(h)); g != w {
						t.Errorf("%s: %s %q under the emulator, %q from the local server", name, h, g, w)
					}
				}
				if got.header.Get("Ngrok-Operation-Id") == "" {
					t.Errorf("%s: no Ngrok-Operation-Id under the emulator", name)
				}
				if got.status == http.StatusCreated {
					app.SampleCreated(lam.vars, ev.RouteKey, []byte(got.body))
					app.SampleCreated(loc.vars, ev.RouteKey, []byte(want.body))
				}
			}
		})
	}
	workers := workerAnswers(t, st, env)
	for _, w := range app.Workers {
		t.Run(w.Dir, func(t *testing.T) {
			t.Parallel()
			local := workers[w.Dir]
			if local == nil {
				t.Fatalf("no in-process answer for worker %s", w.Dir)
			}
			e := startEmulator(t, rie, filepath.Join(tasks, w.Dir), append(lambdaEnvironment(w.Name, limits[w.Name].Timeout, limits[w.Name].MemorySize), env[w.Name]...))
			files, err := app.SampleFiles("../..", w.Dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, file := range files {
				raw, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				// Ids aside (an answer's operation id).
				got := idPattern.ReplaceAllString(canonicalJSON(t, e.invoke(t, raw)), "${1}_<id>")
				want := idPattern.ReplaceAllString(canonicalJSON(t, local(t, raw)), "${1}_<id>")
				if got != want {
					t.Errorf("%s: %s under the emulator, %s in process", filepath.Base(file), got, want)
				}
			}
		})
	}
	t.Run(app.Operator.Dir, func(t *testing.T) {
		t.Parallel()
		e := startEmulator(t, rie, filepath.Join(tasks, app.Operator.Dir), append(lambdaEnvironment(app.Operator.Name, limits[app.Operator.Name].Timeout, limits[app.Operator.Name].MemorySize), env[app.Operator.Name]...))
		walkOperator(t, e, env)
	})
}

// sameHeaders are the response headers a function sets that must equal the local server's.
var sameHeaders = []string{"Content-Type", "Location", "Ngrok-Version", "Cache-Control", "Retry-After",
	"Access-Control-Allow-Origin", "Access-Control-Allow-Credentials", "Vary", "Idempotency-Replayed"}

// answer is an HTTP answer: from the local server, or a function's as API Gateway turns it into one.
type answer struct {
	status int
	header http.Header
	body   string
}

// lambdaAnswer is res as API Gateway answers it.
func lambdaAnswer(t testing.TB, res events.APIGatewayV2HTTPResponse) answer {
	t.Helper()
	a := answer{status: res.StatusCode, header: http.Header{}, body: res.Body}
	for k, v := range res.Headers {
		a.header.Set(k, v)
	}
	for k, vs := range res.MultiValueHeaders {
		for _, v := range vs {
			a.header.Add(k, v)
		}
	}
	if res.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(res.Body)
		if err != nil {
			t.Fatalf("a base64 body that is not base64: %v", err)
		}
		a.body = string(b)
	}
	return a
}

// walk is one run through a function's samples on an account of its own: the values its
// placeholders take (made by samples.Setup, then the ids its creates return).
type walk struct {
	vars map[string]string
}

func newWalk(t *testing.T, st *testkit.Stack, dir string) *walk {
	t.Helper()
	a := st.NewAccount(t)
	makers := testkit.SampleMakers(t, a)
	var reported map[string]string
	report := makers.Report
	makers.Report = func(ctx context.Context) (map[string]string, error) {
		var err error
		reported, err = report(ctx)
		return reported, err
	}
	vars, err := samples.Setup(t.Context(), "../..", dir, makers)
	if err != nil {
		t.Fatal(err)
	}
	vars[app.TokenPlaceholder] = a.Token
	if url := reported["public_url"]; url != "" {
		// A reported tunnel's URL is on a domain the walk reserved: masked as walks' values are.
		vars["{{public_url}}"] = url
	}
	return &walk{vars: vars}
}

// serve sends the request the sample event text describes to the local server, on the host
// the event names (the API's own host, which the answers' URIs are built on).
func (w *walk) serve(t testing.TB, st *testkit.Stack, text string) answer {
	t.Helper()
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal([]byte(text), &ev); err != nil {
		t.Fatal(err)
	}
	body := ev.Body
	if ev.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(body)
		if err != nil {
			t.Fatal(err)
		}
		body = string(b)
	}
	target := st.Server.URL + ev.RawPath
	if ev.RawQueryString != "" {
		target += "?" + ev.RawQueryString
	}
	req, err := http.NewRequest(ev.RequestContext.HTTP.Method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range ev.Headers {
		req.Header.Set(k, v)
	}
	if len(ev.Cookies) > 0 {
		req.Header.Set("Cookie", strings.Join(ev.Cookies, "; "))
	}
	req.Host = ev.RequestContext.DomainName
	res, err := testkit.Send(req)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: res.Status, header: res.Header, body: string(res.Body)}
}

var (
	idPattern   = regexp.MustCompile(`\b([a-z][a-z0-9]*)_[0-9A-Za-z]{27}\b`)
	timePattern = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	// stampPattern is a time in nanoseconds, as the samples' setup makes names unique.
	stampPattern = regexp.MustCompile(`\b\d{16,}\b`)
)

// generated are the fields whose values are made at random when a resource is created, or
// derived from such a value or from an id: two walks differ in them by design. A present value
// is masked; a missing or null one stays as it is.
var generated = map[string]bool{
	"token": true, "addr": true, "public_key": true, "certificate": true, "cert": true, "serial_number": true,
	"request_signing_certificate_pem": true, "cname_target": true, "acme_challenge_cname_target": true,
}

// normalize takes out of an answer what two walks differ in: the values of the walk's
// placeholders become their names, other ids their kind, times and generated fields are masked,
// and lists of objects (in id order, which is random within a second) are sorted.
func (w *walk) normalize(s string) string {
	names := slices.SortedFunc(maps.Keys(w.vars), func(a, b string) int {
		return cmp.Or(len(w.vars[b])-len(w.vars[a]), strings.Compare(a, b))
	})
	for _, name := range names {
		v := w.vars[name]
		if v == "" {
			continue
		}
		quoted := testkit.JSONString(v)
		s = strings.ReplaceAll(s, quoted[1:len(quoted)-1], name)
		s = strings.ReplaceAll(s, v, name)
	}
	s = idPattern.ReplaceAllString(s, "${1}_<id>")
	s = timePattern.ReplaceAllString(s, "<time>")
	s = stampPattern.ReplaceAllString(s, "<stamp>")
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(masked(v))
	return string(b)
}

// masked is v with generated fields masked and lists of objects sorted.
func masked(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && s != "" && generated[k] {
				x[k] = "<generated>"
			} else {
				x[k] = masked(e)
			}
		}
	case []any:
		if len(x) == 0 {
			return x
		}
		for i := range x {
			x[i] = masked(x[i])
		}
		if _, objects := x[0].(map[string]any); objects {
			encode := func(e any) string { b, _ := json.Marshal(e); return string(b) }
			slices.SortStableFunc(x, func(a, b any) int { return strings.Compare(encode(a), encode(b)) })
		}
	}
	return v
}

// canonicalJSON is b re-encoded with sorted keys, so that equal answers compare equal.
func canonicalJSON(t testing.TB, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// functionEnvironments returns every function's environment (by logical id) as `make sam-local`
// writes it, for processes on this machine, pointed at st's table, the stack's emulators and
// queues of this test, and every function's timeout and memory size from template.yaml.
func functionEnvironments(t *testing.T, st *testkit.Stack) (map[string][]string, map[string]testkit.TemplateFunction) {
	t.Helper()
	tpl, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	key, err := samlocal.LoadSealKey(testkit.Config(t, config.LoadHTTP).Seal.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	settings, err := samlocal.LocalSettings(config.Env)
	if err != nil {
		t.Fatal(err)
	}
	q, cq := testkit.NewQueues(t, nil), testkit.NewQueues(t, nil)
	values, err := samlocal.Stack{DynamoDBEndpoint: os.Getenv("DYNAMODB_ENDPOINT"), SQSEndpoint: os.Getenv("SQS_ENDPOINT"),
		Table: st.DB.Table, SealKey: key, Settings: settings,
		Queues: map[string]string{"EVENTS_QUEUE_URL": q.Events, "EVENTS_DLQ_URL": q.DLQ,
			"CERT_JOBS_QUEUE_URL": cq.Events, "CERT_JOBS_DLQ_URL": cq.DLQ}}.LocalValues()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range app.Functions() {
		names = append(names, f.Name)
	}
	for _, w := range app.Workers {
		names = append(names, w.Name)
	}
	names = append(names, app.Operator.Name)
	vars, err := samlocal.EnvVars(tpl, names, values)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string][]string{}
	for _, name := range names {
		for _, k := range slices.Sorted(maps.Keys(vars[name])) {
			env[name] = append(env[name], k+"="+vars[name][k])
		}
	}
	return env, testkit.TemplateFunctions(t, "../../template.yaml")
}

// workerAnswers answer a worker's sample event (raw JSON) as its Lambda handler built in process
// from env (its environment under the emulator) answers it.
func workerAnswers(t *testing.T, st *testkit.Stack, env map[string][]string) map[string]func(testing.TB, []byte) []byte {
	lookup := func(name string) config.Lookup { return lookupIn(env, name) }
	quiet := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	ec, err := config.LoadEventWorker(lookup("EventWorkerFunction"))
	if err != nil {
		t.Fatal(err)
	}
	ew, err := delivery.FromConfig(ctx, ec, quiet)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := config.LoadCertWorker(lookup("CertWorkerFunction"))
	if err != nil {
		t.Fatal(err)
	}
	cw, err := certs.FromConfig(ctx, cc, quiet)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := config.LoadScheduler(lookup("SchedulerFunction"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := scheduler.FromConfig(ctx, sc, quiet)
	if err != nil {
		t.Fatal(err)
	}
	uc, err := config.LoadUsageWorker(lookup("UsageWorkerFunction"))
	if err != nil {
		t.Fatal(err)
	}
	uw, err := usage.FromConfig(ctx, uc, quiet)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := config.LoadTunnelPlugin(lookup("TunnelPluginFunction"))
	if err != nil {
		t.Fatal(err)
	}
	pdb, err := store.Open(ctx, pc.StoreOptions())
	if err != nil {
		t.Fatal(err)
	}
	plugin := (&frpplugin.Plugin{DB: pdb, Domains: pc.Domains, Lease: pc.Lease, Log: quiet}).Lambda()
	sqsAnswer := func(handle queue.Worker) func(testing.TB, []byte) []byte {
		h := queue.Handler(handle.Handle)
		return func(t testing.TB, raw []byte) []byte {
			var ev events.SQSEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatal(err)
			}
			res, err := h(ctx, ev)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(res)
			return b
		}
	}
	return map[string]func(testing.TB, []byte) []byte{
		"event_worker": sqsAnswer(ew),
		"cert_worker":  sqsAnswer(cw),
		"scheduler": func(t testing.TB, raw []byte) []byte {
			if _, err := s.Run(ctx, time.Now()); err != nil {
				t.Fatal(err)
			}
			return []byte("null") // the handler returns only an error
		},
		"tunnel_plugin": func(t testing.TB, raw []byte) []byte {
			var ev events.APIGatewayV2HTTPRequest
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatal(err)
			}
			res, err := plugin(ctx, ev)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(res)
			return b
		},
		"usage_worker": func(t testing.TB, raw []byte) []byte {
			var ev events.CloudwatchLogsEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatal(err)
			}
			if err := uw.Handle(ctx, ev); err != nil {
				t.Fatal(err)
			}
			return []byte("null") // the handler returns only an error
		},
	}
}

// lookupIn is the environment of function name under the emulator (env, its configured
// variables, and what Lambda sets) as a config.Lookup.
func lookupIn(env map[string][]string, name string) config.Lookup {
	m := map[string]string{}
	for _, kv := range append(lambdaEnvironment(name, 0, 0), env[name]...) {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return config.Map(m)
}

// walkOperator walks the operator function's samples through e (its zip under the emulator)
// beside a walk through its Lambda handler built in process from the same environment, each
// on a tenant of its own: every answer has its route's status and, ids, times and generated
// values aside, the same body; a list (of every tenant, which other tests add to) the same
// members.
func walkOperator(t *testing.T, e *emulator, env map[string][]string) {
	c, err := config.LoadOperator(lookupIn(env, app.Operator.Name))
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(t.Context(), c.StoreOptions())
	if err != nil {
		t.Fatal(err)
	}
	local := (&operator.Operator{DB: db, Collections: operator.CollectionsOf(app.Families), Log: slog.New(slog.DiscardHandler), Principals: c.Principals}).Lambda()
	files, err := app.SampleFiles("../..", app.Operator.Dir)
	if err != nil {
		t.Fatal(err)
	}
	lam, loc := &walk{vars: map[string]string{}}, &walk{vars: map[string]string{}}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var got, want events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(e.invoke(t, []byte(app.FillSample(string(raw), lam.vars))), &got); err != nil {
			t.Fatalf("%s: the function's answer is not an HTTP API response: %v", file, err)
		}
		var ev events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal([]byte(app.FillSample(string(raw), loc.vars)), &ev); err != nil {
			t.Fatal(err)
		}
		if want, err = local(t.Context(), ev); err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(file)
		if status := operator.StatusOf(ev.RouteKey); got.StatusCode != status || want.StatusCode != status {
			t.Fatalf("%s: status %d under the emulator, %d in process, want %d:\n%s\n%s", name, got.StatusCode, want.StatusCode, status, got.Body, want.Body)
		}
		g, w := lam.normalize(got.Body), loc.normalize(want.Body)
		if ev.RouteKey == "GET /operator/tenants" || ev.RouteKey == "GET /operator/tunnel_servers" || ev.RouteKey == "POST /operator/tunnel_servers" {
			// Lists of what both walks made; a key's secret, which differs.
			g, w = members(t, got.Body), members(t, want.Body)
		}
		if g != w {
			t.Errorf("%s: body under the emulator:\n%s\nin process:\n%s", name, g, w)
		}
		if got.StatusCode == http.StatusCreated && ev.RouteKey == "POST /operator/tenants" {
			app.TenantCreated(lam.vars, []byte(got.Body))
			app.TenantCreated(loc.vars, []byte(want.Body))
		}
		if got.StatusCode == http.StatusCreated && ev.RouteKey == "POST /operator/tunnel_servers" {
			app.SampleCreated(lam.vars, ev.RouteKey, []byte(got.Body))
			app.SampleCreated(loc.vars, ev.RouteKey, []byte(want.Body))
		}
	}
}

// members are the names of body's top-level members, sorted.
func members(t testing.TB, body string) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, body)
	}
	return strings.Join(slices.Sorted(maps.Keys(m)), ",")
}
