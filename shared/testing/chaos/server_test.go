package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/serve"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/faults"
	"tunnelapi/shared/testing/testkit"
)

// budget is the function timeout the faulty server's requests run under, as a Lambda context
// would carry it: shorter than the template's, so a held connection costs a test seconds.
const budget = 3 * time.Second

// faulty is the service on the shared stack's table reached through a proxy that can misbehave
// and a client whose calls DynamoDB's own failures can be injected into.
type faulty struct {
	stack *testkit.Stack
	proxy *faults.Proxy
	dyn   *faults.DynamoDB
	srv   *httptest.Server
	// late counts requests whose handler returned after their deadline.
	late atomic.Int64
}

// newFaulty serves every family through the proxy; wrap, when given, wraps the service's
// handler (a test that breaks it on purpose). The service's DynamoDB client opens a connection
// per attempt, so a toxic's toxicity is the fraction of attempts it meets; with keep-alive,
// a few long-lived connections would decide whether a whole history meets it at all.
func newFaulty(t *testing.T, wrap ...func(http.Handler) http.Handler) *faulty {
	t.Helper()
	s := testkit.Shared(t, app.Families...)
	c := testkit.Config(t, config.LoadHTTP)
	fs := faults.NewStore(t, "dynamodb", c.AWSConfig(), store.Options{Table: s.DB.Table})
	f := &faulty{stack: s, proxy: fs.Proxy, dyn: fs.DynamoDB}
	d, err := serve.NewDeps(context.Background(), c, fs.Options)
	if err != nil {
		t.Fatal(err)
	}
	d.Kit.Log, d.Server.Log = testkit.Logger(), testkit.Logger()
	mux := d.Mux(app.Families...)
	for _, w := range wrap {
		mux = w(mux)
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), budget)
		defer cancel()
		mux.ServeHTTP(w, r.WithContext(ctx))
		if ctx.Err() != nil {
			f.late.Add(1)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// heal removes every fault.
func (f *faulty) heal() {
	f.proxy.Clear()
	f.dyn.Set(0)
}

// answer is what a client saw: a status with headers and body, or no answer (err).
type answer struct {
	status int
	header http.Header
	body   []byte
	err    error
}

// errorCode is the error envelope's error_code of a non-2xx answer.
func (a answer) errorCode() string {
	var e struct {
		Code string `json:"error_code"`
	}
	json.Unmarshal(a.body, &e)
	return e.Code
}

// client speaks to the faulty server; it gives up on an answer after the deadline and a second.
var client = &http.Client{Timeout: budget + time.Second}

func (f *faulty) do(token, method, path string, headers http.Header, body any) answer {
	req, err := testkit.NewRequest(method, f.srv.URL+path, token, body)
	if err != nil {
		return answer{err: err}
	}
	for k, v := range headers {
		req.Header[k] = v
	}
	res, err := client.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return answer{err: err}
	}
	return answer{status: res.StatusCode, header: res.Header, body: b}
}

// honest reports why a is not an answer the platform allows under faults (a 2xx, a documented
// 4xx, a 503 with Retry-After and the envelope), or "" when it is one. The documented 4xx are a
// 404, a 429 ERR_NGROK_225 with Retry-After (a write that lost to others too often) and the 400
// with the refusal code of the
// operation's kind ("" for none). No answer at all is allowed: the network to the client is
// not under test, the client's own timeout is.
func honest(a answer, refusal string) string {
	switch {
	case a.err != nil, a.status >= 200 && a.status < 300:
		return ""
	case a.status == http.StatusServiceUnavailable:
		if a.header.Get("Retry-After") == "" {
			return "503 without Retry-After"
		}
		if c := a.errorCode(); c != "ERR_NGROK_1501" && c != "ERR_NGROK_1502" {
			return "503 with code " + c
		}
		return ""
	case a.status == http.StatusTooManyRequests:
		if a.header.Get("Retry-After") == "" {
			return "429 without Retry-After"
		}
		if c := a.errorCode(); c != "ERR_NGROK_225" {
			return "429 with code " + c
		}
		return ""
	case a.status == 404:
		return ""
	case a.status == 400 && refusal != "" && a.errorCode() == refusal:
		return ""
	default:
		return strings.TrimSpace(http.StatusText(a.status) + " " + string(a.body))
	}
}

// honest holds answers to the rules: a 503 or 429 says when to retry and carries its code; a
// 409, a 500 and an undocumented 400 are not answers the platform gives under faults.
func TestHonestAnswers(t *testing.T) {
	retry := http.Header{"Retry-After": {"1"}}
	envelope := func(code string) []byte { return []byte(`{"error_code":"` + code + `"}`) }
	cases := []struct {
		name   string
		a      answer
		honest bool
	}{
		{"201", answer{status: 201}, true},
		{"no answer", answer{err: errors.New("reset")}, true},
		{"503 1501 with Retry-After", answer{status: 503, header: retry, body: envelope("ERR_NGROK_1501")}, true},
		{"503 1502 with Retry-After", answer{status: 503, header: retry, body: envelope("ERR_NGROK_1502")}, true},
		{"503 without Retry-After", answer{status: 503, header: http.Header{}, body: envelope("ERR_NGROK_1501")}, false},
		{"429 225 with Retry-After", answer{status: 429, header: retry, body: envelope("ERR_NGROK_225")}, true},
		{"429 without Retry-After", answer{status: 429, header: http.Header{}, body: envelope("ERR_NGROK_225")}, false},
		{"429 rate limited", answer{status: 429, header: retry, body: envelope("ERR_NGROK_226")}, false},
		{"404", answer{status: 404}, true},
		{"409", answer{status: 409, body: envelope("ERR_NGROK_409")}, false},
		{"the kind's refusal", answer{status: 400, body: envelope("ERR_NGROK_1414")}, true},
		{"another 400", answer{status: 400, body: envelope("ERR_NGROK_215")}, false},
		{"500", answer{status: 500, body: envelope("ERR_NGROK_500")}, false},
	}
	for _, c := range cases {
		if why := honest(c.a, "ERR_NGROK_1414"); (why == "") != c.honest {
			t.Errorf("%s: honest says %q, want honest %v", c.name, why, c.honest)
		}
	}
}
