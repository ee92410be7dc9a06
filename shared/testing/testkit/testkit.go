// Package testkit runs integration tests against the real local stack that `make test` starts:
// a fresh DynamoDB table per test binary, the service's handlers on an httptest server, accounts
// made by the real bootstrap, a client speaking the wire protocol, and a counter of DynamoDB
// round trips made through an SDK middleware.
package testkit

import (
	"bytes"
	"context"
	"encoding/json"
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

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/awsconfig"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/serve"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/platform/stream"
	"tunnelapi/shared/workers/usage"
)

// TestBudget is how long a request of a test stack may run (api.Server.Budget).
const TestBudget = time.Minute

// Stack is one test binary's view of the local stack.
type Stack struct {
	DB     *store.DB
	Deps   *serve.Deps
	Server *httptest.Server
	// Calls counts DynamoDB operations, SQSCalls SQS operations.
	Calls, SQSCalls *Counter
	// Queues are the stack's own events queues (nil without SQS_ENDPOINT, or without events:
	// Start); a stream reader carries committed events from the table's stream to
	// Queues.Events, as the events Pipe does in AWS.
	Queues *Queues
	// AbortAfterCommit, when set, is asked for each mutation the handlers answered with a 2xx
	// (so it committed); true drops the connection instead of answering, as a server killed
	// between its commit and its response would (fault injection).
	AbortAfterCommit func(*http.Request) bool
	// Usage sums the usage lines of the stack's requests, as the usage worker sums them from
	// the functions' logs in AWS: its Flush writes them to the table (nil on a benchmark's stack:
	// BenchAppAccount). Metrics is the emitter of the stack's handlers (testkit.Metrics teed into
	// Usage), for workers a test runs to use too.
	Usage      *usage.Aggregator
	Metrics    *metrics.Emitter
	ledger     ledger
	families   []*resource.Descriptor
	stopReader func()
	// lambda is the Lambda handler of families, built once (DoFrom).
	lambda     func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
	lambdaOnce sync.Once
	// config is what the stack's HTTP functions were configured with.
	config config.HTTP
}

// StopReader stops the stack's own stream reader (for tests that run readers of their own on
// the stack's events queue).
func (s *Stack) StopReader() {
	if s.stopReader != nil {
		s.stopReader()
		s.stopReader = nil
	}
}

// Counter counts AWS operations by name. Operations made on behalf of an API request (their
// context carries the request) are counted in Total and ByName; those made detached from any
// request, such as background work after the response, only in Detached.
type Counter struct {
	mu       sync.Mutex
	byName   map[string]int
	last     map[string]any
	total    atomic.Int64
	detached atomic.Int64
}

// Reset zeroes the counter.
func (c *Counter) Reset() {
	c.mu.Lock()
	c.byName, c.last = map[string]int{}, map[string]any{}
	c.mu.Unlock()
	c.total.Store(0)
	c.detached.Store(0)
}

// Total is the number of operations on behalf of requests since the last Reset.
func (c *Counter) Total() int { return int(c.total.Load()) }

// Detached is the number of operations outside any request since the last Reset.
func (c *Counter) Detached() int { return int(c.detached.Load()) }

// Last returns the input of the latest operation name made on behalf of a request (nil if
// none since the last Reset), for benchmarks that replay a request's own calls bare.
func (c *Counter) Last(name string) any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last[name]
}

// ByName returns a copy of the per-operation counts.
func (c *Counter) ByName() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.byName {
		out[k] = v
	}
	return out
}

func (c *Counter) middleware(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, c.Add) }

// Add installs the counter on an SDK client's middleware stack (append it to APIOptions).
func (c *Counter) Add(s *middleware.Stack) error {
	return s.Initialize.Add(middleware.InitializeMiddlewareFunc("countCalls",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if _, onRequest := api.FromContext(ctx); !onRequest {
				c.detached.Add(1)
				return next.HandleInitialize(ctx, in)
			}
			name := middleware.GetOperationName(ctx)
			c.mu.Lock()
			if c.byName == nil {
				c.byName, c.last = map[string]int{}, map[string]any{}
			}
			c.byName[name]++
			c.last[name] = in.Parameters
			c.mu.Unlock()
			c.total.Add(1)
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
}

// Endpoint returns the DynamoDB Local endpoint, failing (under `make test`, which sets
// REQUIRE_STACK) or skipping (plain `go test` without a stack) when there is none.
func Endpoint(t testing.TB) string {
	t.Helper()
	return Require(t, "DYNAMODB_ENDPOINT")[0]
}

// Start creates a fresh table and serves families on an httptest server for the test's lifetime.
// The table has no stream, so no events leave it: DynamoDB Local makes the transactions of a
// table with a stream wait on each other, several times slower under concurrency (real DynamoDB
// does not), which tests that need no events should not pay. StartWithEvents is the whole
// pipeline.
func Start(t testing.TB, families ...*resource.Descriptor) *Stack {
	t.Helper()
	return start(t, false, true, families)
}

// StartWithEvents is Start on a table with its stream, as template.yaml declares it, and (when
// the SQS emulator is there) fresh events queues that a stream reader feeds as the events Pipe
// does in AWS.
func StartWithEvents(t testing.TB, families ...*resource.Descriptor) *Stack {
	t.Helper()
	return start(t, true, true, families)
}

// start is Start (events false) or StartWithEvents; metered tees the handlers' lines into the
// stack's Usage, as every stack but a benchmark's does (BenchAppAccount).
func start(t testing.TB, events, metered bool, families []*resource.Descriptor) *Stack {
	t.Helper()
	ep := Endpoint(t)
	ctx := context.Background()
	c := &Counter{}
	table := fmt.Sprintf("test-%d-%d", time.Now().UnixNano(), os.Getpid())
	cfg := Config(t, config.LoadHTTP)
	d, err := serve.NewDeps(ctx, cfg, store.Options{Table: table, Endpoint: ep, APIOptions: []func(*dynamodb.Options){c.middleware}})
	if err != nil {
		t.Fatal(err)
	}
	create := d.Kit.DB.CreateTableWithoutStream
	if events {
		create = d.Kit.DB.CreateTable
	}
	if err := create(ctx); err != nil {
		t.Fatal(err)
	}
	d.Kit.Log, d.Server.Log = Logger(), Logger()
	var agg *usage.Aggregator
	em := Metrics()
	if metered {
		agg = &usage.Aggregator{DB: d.Kit.DB}
		em = &metrics.Emitter{W: io.MultiWriter(em.W, agg)}
	}
	d.Kit.Metrics, d.Server.Metrics = em, em
	// Tests race hundreds of requests on two loaded cores, where one can take longer than its
	// function's timeout without anything being wrong; the deadline's own tests (package chaos)
	// set theirs.
	d.Server.Budget = TestBudget
	st := &Stack{DB: d.Kit.DB, Deps: d, Calls: c, SQSCalls: &Counter{}, config: cfg, Usage: agg, Metrics: em}
	if cfg.SQSEndpoint != "" && events {
		st.Queues = NewQueues(t, st.SQSCalls)
		st.stopReader = st.RunReader(stream.Events.To(st.Queues.Events), nil)
	}
	st.Server = httptest.NewServer(st.abortAfterCommit(st.ledger.observe(d.Mux(families...))))
	t.Cleanup(func() {
		st.Server.Close()
		st.StopReader()
		d.Kit.DB.Client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	})
	st.families = families
	return st
}

// Instance serves families from dependencies of their own on the stack's table, as another
// Lambda instance would: built from the environment (as it is now) as the main of a function
// serving families builds them (serve.Loader: only the settings sections they read), sharing
// no memory with the stack. It lives as long as the test.
func (s *Stack) Instance(t testing.TB, families ...*resource.Descriptor) (*serve.Deps, *httptest.Server) {
	t.Helper()
	d, err := serve.NewDeps(context.Background(), Config(t, serve.Loader(families...)), store.Options{Table: s.DB.Table, Endpoint: Endpoint(t)})
	if err != nil {
		t.Fatal(err)
	}
	d.Kit.Log, d.Server.Log = Logger(), Logger()
	d.Kit.Metrics, d.Server.Metrics = Metrics(), Metrics()
	srv := httptest.NewServer(d.Mux(families...))
	t.Cleanup(srv.Close)
	return d, srv
}

// ReaderIdle is the test stack's stream reader's pause between empty reads: short, so tests
// waiting for an event wait little.
const ReaderIdle = 20 * time.Millisecond

// NewReader builds a stream reader of the stack's table for c, sending with the stack's SQS
// client (its calls are counted, as detached from any request); tune, when given, adjusts it.
func (s *Stack) NewReader(c stream.Consumer, tune func(*stream.Reader)) *stream.Reader {
	r := &stream.Reader{DB: s.DB, Streams: stream.NewClient(awsconfig.New(s.config.AWS), s.config.DynamoDBEndpoint),
		SQS: s.Queues.Client, Consumer: c, Log: s.Deps.Kit.Log, Idle: ReaderIdle}
	if tune != nil {
		tune(r)
	}
	return r
}

// RunReader runs a stream reader (NewReader) until the returned stop is called; stop waits
// for it to finish.
func (s *Stack) RunReader(c stream.Consumer, tune func(*stream.Reader)) (stop func()) {
	r := s.NewReader(c, tune)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := r.Run(ctx); err != nil {
			r.Log.Error("stream reader stopped", "consumer", c.Name, "err", err.Error())
		}
	}()
	return func() { cancel(); <-done }
}

func (s *Stack) abortAfterCommit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || s.AbortAfterCommit == nil {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&commitWatch{ResponseWriter: w, r: r, abort: s.AbortAfterCommit}, r)
	})
}

// commitWatch drops the connection when a mutation's 2xx status is about to be written and
// abort says so.
type commitWatch struct {
	http.ResponseWriter
	r     *http.Request
	abort func(*http.Request) bool
}

func (c *commitWatch) WriteHeader(status int) {
	if status >= 200 && status < 300 && c.abort(c.r) {
		panic(http.ErrAbortHandler)
	}
	c.ResponseWriter.WriteHeader(status)
}

var (
	sharedMu    sync.Mutex
	sharedStack *Stack
)

// Shared returns one stack for the whole test binary (created on first use, never torn down:
// its table has a unique name and DynamoDB Local is in memory).
func Shared(t testing.TB, families ...*resource.Descriptor) *Stack {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedStack == nil {
		sharedStack = Start(noCleanup{t}, families...)
	}
	return sharedStack
}

// noCleanup drops Cleanup registrations so a shared stack outlives the test that made it.
type noCleanup struct{ testing.TB }

// Cleanup implements testing.TB (it drops the cleanup).
func (noCleanup) Cleanup(func()) {}

// Account is a bootstrapped account with its admin's token.
type Account struct {
	*principals.Bootstrapped
	s *Stack
}

// NewAccount bootstraps a fresh account.
func (s *Stack) NewAccount(t testing.TB) *Account {
	t.Helper()
	b, err := principals.Bootstrap(context.Background(), s.DB, "admin@test.local", "test admin")
	if err != nil {
		t.Fatal(err)
	}
	return &Account{Bootstrapped: b, s: s}
}

// Response is a decoded response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map (failing the test if it is not an object).
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response %d is not a JSON object: %v: %s", r.Status, err, r.Body)
	}
	return m
}

// Do sends a request with token as the bearer (none when empty). body may be nil, a string
// sent verbatim, or a value marshalled to JSON.
func (s *Stack) Do(t testing.TB, method, path, token string, body any) *Response {
	t.Helper()
	return s.DoWith(t, method, path, token, nil, body)
}

// DoWith is Do with extra request headers.
func (s *Stack) DoWith(t testing.TB, method, path, token string, headers http.Header, body any) *Response {
	t.Helper()
	url := path
	if !strings.HasPrefix(path, "http") {
		url = s.Server.URL + path
	}
	req, err := NewRequest(method, url, token, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range headers {
		req.Header[k] = vs
	}
	r, err := Send(req)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Send sends req and reads the whole answer, for tests that expect the server to drop some: the
// error is a connection dropped before an answer (no Response) or an answer cut short (the
// Response as far as it came).
func Send(req *http.Request) (*Response, error) {
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return &Response{Status: res.StatusCode, Header: res.Header, Body: b}, err
}

// NewRequest is a request to the API as its clients send one: token as the bearer (none when
// empty), Ngrok-Version 2, and body (nil, a string or bytes sent verbatim, or a value marshalled
// to JSON) as application/json.
func NewRequest(method, url, token string, body any) (*http.Request, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Ngrok-Version", "2")
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// DoFrom sends a request as API Gateway would deliver it from source (its request context's
// sourceIp) through the Lambda handler of every registered family, for tests about the caller's
// address. Nothing goes over the network: source is only a field of the event.
func (s *Stack) DoFrom(t testing.TB, source, method, path, token string, body any) *Response {
	t.Helper()
	var raw string
	switch b := body.(type) {
	case nil:
	case string:
		raw = b
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(j)
	}
	p, q, _ := strings.Cut(path, "?")
	host := strings.TrimPrefix(s.Server.URL, "http://")
	headers := map[string]string{"authorization": "Bearer " + token, "ngrok-version": "2", "host": host}
	if body != nil {
		headers["content-type"] = "application/json"
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RawPath: p, RawQueryString: q, Headers: headers, Body: raw,
		RequestContext: events.APIGatewayV2HTTPRequestContext{DomainName: host,
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: p, Protocol: "HTTP/1.1", SourceIP: source}},
	}
	s.lambdaOnce.Do(func() { s.lambda = s.Deps.Handler(s.families...) })
	res, err := s.lambda(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	for k, v := range res.Headers {
		h.Set(k, v)
	}
	if h.Get(resource.ReplayedHeader) == "" {
		s.ledger.record(method, res.StatusCode, []byte(res.Body))
	}
	return &Response{Status: res.StatusCode, Header: h, Body: []byte(res.Body)}
}

// URL is the stack server's absolute URL of path.
func (a *Account) URL(path string) string { return a.s.Server.URL + path }

// Do is Stack.Do with the account's admin token.
func (a *Account) Do(t testing.TB, method, path string, body any) *Response {
	t.Helper()
	return a.s.Do(t, method, path, a.Token, body)
}

// DoWith is Stack.DoWith with the account's admin token.
func (a *Account) DoWith(t testing.TB, method, path string, headers http.Header, body any) *Response {
	t.Helper()
	return a.s.DoWith(t, method, path, a.Token, headers, body)
}

// Expect fails the test unless the response has status; it returns the decoded body (nil for
// an empty body).
func (r *Response) Expect(t testing.TB, status int) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if len(r.Body) == 0 {
		return nil
	}
	return r.JSON(t)
}

// ExpectError checks the error envelope: status, code, and that details name field (when given)
// and carry the operation id from the response header.
func (r *Response) ExpectError(t testing.TB, status int, code, field string) map[string]any {
	t.Helper()
	m := r.Expect(t, status)
	if got, _ := m["status_code"].(float64); int(got) != status {
		t.Fatalf("status_code %v in body, want %d: %s", m["status_code"], status, r.Body)
	}
	if code != "" && m["error_code"] != code {
		t.Fatalf("error_code %v, want %s: %s", m["error_code"], code, r.Body)
	}
	d, ok := m["details"].(map[string]any)
	if !ok {
		t.Fatalf("details missing: %s", r.Body)
	}
	if d["operation_id"] != r.Header.Get("Ngrok-Operation-Id") || d["operation_id"] == "" {
		t.Fatalf("details.operation_id %v does not match header %q", d["operation_id"], r.Header.Get("Ngrok-Operation-Id"))
	}
	if field != "" && d["field"] != field {
		t.Fatalf("details.field %v, want %s: %s", d["field"], field, r.Body)
	}
	if _, ok := m["msg"].(string); !ok {
		t.Fatalf("msg missing: %s", r.Body)
	}
	return m
}

// RoundTrip is a request that must succeed within a budget of DynamoDB calls.
type RoundTrip struct {
	name, method, path string
	body               any
	max                int
}

// Trip is the request method path (with body) named name, allowed at most max DynamoDB calls.
func Trip(name, method, path string, body any, max int) RoundTrip {
	return RoundTrip{name: name, method: method, path: path, body: body, max: max}
}

// WithinCalls sends each request as a and fails t when one does not succeed or makes more
// DynamoDB calls than its budget.
func (a *Account) WithinCalls(t testing.TB, trips ...RoundTrip) {
	t.Helper()
	for _, c := range trips {
		a.s.Calls.Reset()
		res := a.Do(t, c.method, c.path, c.body)
		if res.Status >= 300 {
			t.Fatalf("%s: %d %s", c.name, res.Status, res.Body)
		}
		if got := a.s.Calls.Total(); got > c.max {
			t.Errorf("%s made %d DynamoDB calls %v, want at most %d", c.name, got, a.s.Calls.ByName(), c.max)
		}
	}
}

// AccountOf is the account b on s: one made otherwise than by NewAccount (the operator's
// interface).
func (s *Stack) AccountOf(b *principals.Bootstrapped) *Account {
	return &Account{Bootstrapped: b, s: s}
}
