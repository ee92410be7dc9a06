package runtime

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/textproto"
	"reflect"
	"strconv"
	"strings"
	"testing"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// The Lambda adapter (proxy) must convert every event and every response exactly as
// aws-lambda-go-api-proxy's httpadapter does, which it replaces on the request path: these
// tests run both on the same events through a handler that echoes the request it was given and
// answers as the request asks, and compare the results.

// echo answers with the request as the handler saw it, in JSON, shaped by query parameters:
// status (0: none written), header=<name>:<value> (repeatable, Set-Cookie included), binary
// (a body that is not UTF-8), silent (no body).
func echo(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		body = []byte("read error: " + err.Error())
	}
	q := r.URL.Query()
	for _, h := range q["header"] {
		k, v, _ := strings.Cut(h, ":")
		w.Header().Add(k, v)
	}
	if s, err := strconv.Atoi(q.Get("status")); err == nil && s >= 100 && s <= 999 {
		w.WriteHeader(s)
	}
	if q.Has("silent") {
		return
	}
	out, _ := json.Marshal(map[string]any{
		"method": r.Method, "url": r.URL.String(), "host": r.Host, "remote": r.RemoteAddr,
		"uri": r.RequestURI, "header": r.Header, "body": string(body), "length": r.ContentLength,
		"proto": r.Proto,
	})
	if q.Has("binary") {
		out = append(out, 0xff, 0xfe)
	}
	w.Write(out)
}

func compareAdapters(t *testing.T, ev lambdaevents.APIGatewayV2HTTPRequest) {
	t.Helper()
	want, werr := httpadapter.NewV2(http.HandlerFunc(echo)).ProxyWithContext(context.Background(), ev)
	got, gerr := proxy(http.HandlerFunc(echo))(context.Background(), ev)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("event %+v: error %v, httpadapter's %v", ev, gerr, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("event %+v:\n got %+v\nwant %+v", ev, got, want)
	}
}

func event(method, path, query string, headers map[string]string, body string) lambdaevents.APIGatewayV2HTTPRequest {
	return lambdaevents.APIGatewayV2HTTPRequest{
		Version: "2.0", RawPath: path, RawQueryString: query, Headers: headers, Body: body,
		RequestContext: lambdaevents.APIGatewayV2HTTPRequestContext{DomainName: "api.example.com",
			HTTP: lambdaevents.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "203.0.113.7"}},
	}
}

func TestProxyConvertsAsHTTPAdapter(t *testing.T) {
	std := map[string]string{"authorization": "Bearer x, y", "ngrok-version": "2", "content-type": "application/json",
		"accept": "a/b, c/d ,e/f", "x-forwarded-for": "198.51.100.1, 203.0.113.7", "user-agent": "ngrok-api-go/8, like curl"}
	tests := []struct {
		name string
		ev   lambdaevents.APIGatewayV2HTTPRequest
		env  string
	}{
		{"get", event("GET", "/api_keys/ak_1", "", std, ""), ""},
		{"post with a body", event("post", "/api_keys", "", std, `{"description":"é"}`), ""},
		{"query", event("GET", "/api_keys", "limit=10&before_id=ak_2&filter=a%20b", std, ""), ""},
		{"escaped path", event("GET", "/api_keys/ak%2F1", "", std, ""), ""},
		{"path without a slash", event("GET", "api_keys", "", std, ""), ""},
		{"status and headers", event("PATCH", "/x", "status=201&header=X-A:1&header=X-A:2&header=Set-Cookie:a=1&header=set-cookie:b=2", std, "{}"), ""},
		{"no body written", event("DELETE", "/x", "status=204&silent", std, ""), ""},
		{"nothing written", event("DELETE", "/x", "silent", std, ""), ""},
		{"binary response", event("GET", "/x", "binary&header=Content-Type:application/octet-stream", nil, ""), ""},
		{"sniffed content type", event("GET", "/x", "", nil, ""), ""},
		{"custom host", event("GET", "/x", "", std, ""), "http://localhost:3000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv(customHostVariable, tc.env)
			}
			compareAdapters(t, tc.ev)
		})
	}
	t.Run("base64 body and cookies", func(t *testing.T) {
		ev := event("POST", "/x", "", std, base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 0xff}))
		ev.IsBase64Encoded = true
		ev.Cookies = []string{"a=1", "b=2"}
		compareAdapters(t, ev)
	})
	t.Run("bad base64", func(t *testing.T) {
		ev := event("POST", "/x", "", std, "!!")
		ev.IsBase64Encoded = true
		compareAdapters(t, ev)
	})
	t.Run("query parameters without the raw query", func(t *testing.T) {
		ev := event("GET", "/x", "", std, "")
		ev.QueryStringParameters = map[string]string{"limit": "5", "a b": "c&d"}
		compareAdapters(t, ev)
	})
	t.Run("path from the request context", func(t *testing.T) {
		ev := event("GET", "", "", std, "")
		ev.RequestContext.HTTP.Path = "/from/context"
		compareAdapters(t, ev)
	})
}

// FuzzProxyConvertsAsHTTPAdapter: any event converts as httpadapter converts it. Header names
// are lowercased and distinct, as API Gateway sends them (two names of one canonical form would
// be added in map order, which differs between runs of either adapter).
func FuzzProxyConvertsAsHTTPAdapter(f *testing.F) {
	f.Add("GET", "/api_keys/ak_1", "limit=1", "authorization: Bearer a,b\naccept: x, y", "c=1", "", false)
	f.Add("post", "/x", "status=201&header=Set-Cookie:a", "content-type: application/json", "", `{"a":1}`, false)
	f.Add("PUT", "x y", "binary", "", "", "AAEC", true)
	f.Fuzz(func(t *testing.T, method, path, query, headers, cookies, body string, b64 bool) {
		h := map[string]string{}
		for _, line := range strings.Split(headers, "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			k = strings.ToLower(strings.TrimSpace(k))
			dup := false
			for other := range h {
				if textproto.CanonicalMIMEHeaderKey(other) == textproto.CanonicalMIMEHeaderKey(k) {
					dup = true
				}
			}
			if !dup {
				h[k] = strings.TrimSpace(v)
			}
		}
		ev := event(method, path, query, h, body)
		ev.IsBase64Encoded = b64
		if cookies != "" {
			ev.Cookies = strings.Split(cookies, ";")
		}
		compareAdapters(t, ev)
	})
}
