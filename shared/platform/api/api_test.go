package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

type body struct {
	Description *string           `json:"description"`
	ACL         *[]string         `json:"acl"`
	Active      *bool             `json:"active"`
	Labels      map[string]string `json:"labels"`
	Target      *struct {
		Kinesis *struct {
			StreamARN *string `json:"stream_arn"`
		} `json:"kinesis"`
	} `json:"target"`
}

func TestDecodeBytes(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		code  string
		field string
	}{
		{"empty body is {}", "", "", ""},
		{"object", `{"description":"x"}`, "", ""},
		{"nested", `{"target":{"kinesis":{"stream_arn":"x"}},"labels":{"a":"b"}}`, "", ""},
		{"escaped non-BMP character", `{"description":"\ud83d\ude00"}`, "", ""},
		{"unknown field", `{"nope":1}`, CodeUnknownField, "nope"},
		{"unknown nested field", `{"target":{"kinesis":{"arn":"x"}}}`, CodeUnknownField, "target.kinesis.arn"},
		{"malformed", `{"description":`, CodeUnparseableBody, "body"},
		{"syntax", `{"description" "x"}`, CodeUnparseableBody, "description"},
		{"wrong type string", `{"description":5}`, CodeBadFieldValue, "description"},
		{"wrong type bool", `{"active":"yes"}`, CodeBadFieldValue, "active"},
		{"wrong type list", `{"acl":"x"}`, CodeBadFieldValue, "acl"},
		{"wrong type in list", `{"acl":["*",5]}`, CodeBadFieldValue, "acl[1]"},
		{"array body", `[1]`, CodeUnparseableBody, "body"},
		{"trailing data", `{}{}`, CodeUnparseableBody, "body"},
		// Strictness: exact names, no duplicates, valid UTF-8 and surrogates, no NUL.
		{"upper-case name", `{"DESCRIPTION":"x"}`, CodeUnknownField, "DESCRIPTION"},
		{"title-case name", `{"Description":"x"}`, CodeUnknownField, "Description"},
		{"Unicode-folded name", `{"de\u017fcription":"x"}`, CodeUnknownField, "deſcription"},
		{"Kelvin-sign name", `{"\u212aey":"x"}`, CodeUnknownField, "\u212aey"},
		{"member name needing quotes", `{"labels":{"a.b":"\u0000"}}`, CodeBadFieldValue, `labels["a.b"]`},
		{"duplicate member", `{"description":"a","description":"b"}`, CodeUnparseableBody, "description"},
		{"duplicate nested member", `{"target":{"kinesis":{"stream_arn":"a","stream_arn":"b"}}}`, CodeUnparseableBody, "target.kinesis.stream_arn"},
		{"duplicate map key", `{"labels":{"a":"1","a":"2"}}`, CodeUnparseableBody, "labels.a"},
		{"invalid utf8", "{\"description\":\"\xff\"}", CodeUnparseableBody, "description"},
		{"invalid utf8 in list", "{\"acl\":[\"\xc3\"]}", CodeUnparseableBody, "acl[0]"},
		{"lone high surrogate", `{"description":"\ud800"}`, CodeUnparseableBody, "description"},
		{"lone low surrogate", `{"description":"x\udc00"}`, CodeUnparseableBody, "description"},
		{"reversed surrogates", `{"description":"\udc00\ud800"}`, CodeUnparseableBody, "description"},
		{"NUL escaped", `{"description":"a\u0000b"}`, CodeBadFieldValue, "description"},
		{"NUL in list", `{"acl":["\u0000"]}`, CodeBadFieldValue, "acl[0]"},
		{"NUL in map value", `{"labels":{"k":"\u0000"}}`, CodeBadFieldValue, "labels.k"},
		{"NUL in map key", `{"labels":{"k\u0000":"v"}}`, CodeBadFieldValue, `labels["k\x00"]`},
		{"NUL in unknown member", `{"x":"\u0000"}`, CodeBadFieldValue, "x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b body
			err := DecodeBytes([]byte(c.in), &b)
			if c.code == "" {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				return
			}
			e, ok := AsError(err)
			if !ok || e.Code != c.code || e.Field != c.field || e.Status != 400 {
				t.Fatalf("got %#v, want %s naming %s", err, c.code, c.field)
			}
		})
	}
}

// A route's path ids may be repeated in its body when they equal the path's; they never reach
// the family's body type.
func TestDecodePathIDs(t *testing.T) {
	const id, sub = "ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc", "esb_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc"
	cases := []struct {
		name, pattern, path, in string
		code, field             string
		description             string
	}{
		{"same id", "PATCH /api_keys/{id}", "/api_keys/" + id, `{"id":"` + id + `","description":"d"}`, "", "", "d"},
		{"id last", "PATCH /api_keys/{id}", "/api_keys/" + id, `{"description":"d","id":"` + id + `"}`, "", "", "d"},
		{"null id", "PATCH /api_keys/{id}", "/api_keys/" + id, `{"id":null,"description":"d"}`, "", "", "d"},
		{"only the id", "PATCH /api_keys/{id}", "/api_keys/" + id, `{"id":"` + id + `"}`, "", "", ""},
		{"other id", "PATCH /api_keys/{id}", "/api_keys/" + id, `{"id":"ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Td","description":"d"}`, CodeBadFieldValue, "id", ""},
		{"id of another case", "PATCH /api_keys/{id}", "/api_keys/" + id, `{"id":"AK_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc"}`, CodeBadFieldValue, "id", ""},
		{"number id", "PATCH /api_keys/{id}", "/api_keys/" + id, `{"id":1}`, CodeBadFieldValue, "id", ""},
		{"object id", "PATCH /api_keys/{id}", "/api_keys/" + id, `{"id":{"id":"` + id + `"}}`, CodeBadFieldValue, "id", ""},
		{"duplicate id", "PATCH /api_keys/{id}", "/api_keys/" + id, `{"id":"` + id + `","id":"` + id + `"}`, CodeUnparseableBody, "id", ""},
		{"upper-case ID is not the path id", "PATCH /api_keys/{id}", "/api_keys/" + id, `{"ID":"` + id + `"}`, CodeUnknownField, "ID", ""},
		{"nested id is not the path id", "PATCH /api_keys/{id}", "/api_keys/" + id, `{"target":{"id":"` + id + `"}}`, CodeUnknownField, "target.id", ""},
		{"id on a route without one", "POST /api_keys", "/api_keys", `{"id":"` + id + `"}`, CodeUnknownField, "id", ""},
		{"sub-resource POST", "POST /event_subscriptions/{subscription_id}/sources", "/event_subscriptions/" + sub + "/sources",
			`{"subscription_id":"` + sub + `","description":"t"}`, "", "", "t"},
		{"sub-resource POST other parent", "POST /event_subscriptions/{subscription_id}/sources", "/event_subscriptions/" + sub + "/sources",
			`{"subscription_id":"esb_x","description":"t"}`, CodeBadFieldValue, "subscription_id", ""},
		{"two wildcards", "PATCH /event_subscriptions/{subscription_id}/sources/{type}", "/event_subscriptions/" + sub + "/sources/api_key_created.v0",
			`{"type":"api_key_created.v0","subscription_id":"` + sub + `"}`, "", "", ""},
		{"two wildcards, one differs", "PATCH /event_subscriptions/{subscription_id}/sources/{type}", "/event_subscriptions/" + sub + "/sources/api_key_created.v0",
			`{"subscription_id":"` + sub + `","type":"api_key_updated.v0"}`, CodeBadFieldValue, "type", ""},
		{"value equal to a wildcard name", "PATCH /api_keys/{id}", "/api_keys/" + id, `{"description":"id"}`, "", "", "id"},
		{"NUL in a path member", "PATCH /api_keys/{id}", "/api_keys/" + id, `{"id":"\u0000"}`, CodeBadFieldValue, "id", ""},
		{"array body", "PATCH /api_keys/{id}", "/api_keys/" + id, `["id"]`, CodeUnparseableBody, "body", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var hr *http.Request
			mux := http.NewServeMux()
			mux.HandleFunc(c.pattern, func(_ http.ResponseWriter, r *http.Request) { hr = r })
			method, _, _ := strings.Cut(c.pattern, " ")
			mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, c.path, nil))
			if hr == nil {
				t.Fatalf("%s did not match %s", c.path, c.pattern)
			}
			var b body
			err := Decode(&Request{HTTP: hr, Body: []byte(c.in)}, &b)
			if c.code == "" {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				if got := ""; b.Description != nil && *b.Description != c.description || b.Description == nil && c.description != got {
					t.Fatalf("description %v, want %q", b.Description, c.description)
				}
				return
			}
			e, ok := AsError(err)
			if !ok || e.Code != c.code || e.Field != c.field || e.Status != 400 {
				t.Fatalf("got %#v, want %s naming %s", err, c.code, c.field)
			}
		})
	}
}

func FuzzDecodeBytes(f *testing.F) {
	for _, s := range []string{`{}`, `{"description":"x","acl":["*"],"active":true}`, `[`, `{"a":1}`, "\xff",
		`{"DESCRIPTION":"x"}`, `{"de\u017fcription":"x"}`, `{"description":"a","description":"b"}`,
		`{"description":"\ud800"}`, `{"description":"\u0000"}`, `{"labels":{"a\u0000":"b"}}`,
		`{"target":{"kinesis":{"stream_arn":"a","stream_arn":"b"}}}`, `{"id":"x","description":"y"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var b body
		err := DecodeBytes(in, &b)
		if err == nil {
			// Whatever was accepted holds no NUL and only valid UTF-8.
			for _, v := range append([]*string{b.Description}, mapValues(b.Labels)...) {
				if v != nil && (strings.ContainsRune(*v, 0) || !utf8.ValidString(*v)) {
					t.Fatalf("accepted %q", *v)
				}
			}
			return
		}
		e, ok := AsError(err)
		if !ok || e.Status != 400 || e.Field == "" {
			t.Fatalf("decode error is not a 400 naming a field: %#v", err)
		}
	})
}

func mapValues(m map[string]string) []*string {
	var out []*string
	for k, v := range m {
		out = append(out, &k, &v)
	}
	return out
}

func TestBearerToken(t *testing.T) {
	good := "2BxzRWYdf4fWcQOi6JZ7zaSN6Tc_7PvW3mHXzRpp3tUYxBNLU"
	cases := []struct {
		name    string
		headers []string
		code    string
		status  int
	}{
		{"two headers", []string{"Bearer " + good, "Bearer " + good}, CodeBadAuthHeader, 400},
		{"two headers, one empty", []string{"Bearer " + good, ""}, CodeBadAuthHeader, 400},
		{"joined by API Gateway", []string{"Bearer " + good + ",Bearer " + good}, CodeBadAuthHeader, 400},
		{"joined with a space", []string{"Bearer " + good + ", Basic abc"}, CodeBadAuthHeader, 400},
		{"no header at all", nil, CodeNoAuthHeader, 401},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := bearerToken(c.headers)
			if err == nil || err.Code != c.code || err.Status != c.status || err.Field != "Authorization" {
				t.Fatalf("got %v, want %d %s", err, c.status, c.code)
			}
		})
	}
	single := []struct {
		name, header, code string
	}{
		{"missing", "", CodeNoAuthHeader},
		{"basic", "Basic abc", CodeBadAuthHeader},
		{"no token", "Bearer ", CodeBadAuthHeader},
		{"garbage", "Bearer garbage", CodeNotAKey},
		{"key id", "Bearer ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc", CodeKeyIDAsKey},
		{"good", "Bearer " + good, ""},
		{"lowercase scheme", "bearer " + good, ""},
	}
	for _, c := range single {
		t.Run(c.name, func(t *testing.T) {
			_, err := bearerToken([]string{c.header})
			if c.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || err.Code != c.code {
				t.Fatalf("got %v, want %s", err, c.code)
			}
		})
	}
}

func TestParsePage(t *testing.T) {
	cases := []struct {
		query, code, field string
		limit              int
	}{
		{"", "", "", 100},
		{"limit=1", "", "", 1},
		{"limit=100", "", "", 100},
		{"limit=0", CodeBadLimit, "limit", 0},
		{"limit=101", CodeBadLimit, "limit", 0},
		{"limit=-1", CodeBadLimit, "limit", 0},
		{"limit=abc", CodeBadLimit, "limit", 0},
		{"before_id=ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc", "", "", 100},
		{"before_id=cr_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc", CodeBadBeforeID, "before_id", 0},
		{"before_id=junk", CodeBadBeforeID, "before_id", 0},
		{"beforeId=ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc", "", "", 100},
		{"beforeId=cr_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc", CodeBadBeforeID, "beforeId", 0},
		{"beforeId=ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc&before_id=ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc", "", "", 100},
		{"beforeId=ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc&before_id=", "", "", 100},
		{"before_id=ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc&beforeId=ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Td", CodeBadBeforeID, "", 0},
		{"beforeid=ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc", CodeUnknownParam, "beforeid", 0},
		{"sort=asc", CodeUnknownParam, "sort", 0},
		{"filter=x", CodeUnknownParam, "filter", 0},
		{"%zz", CodeUnknownParam, "query", 0},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			r := &Request{HTTP: httptest.NewRequest("GET", "/api_keys?"+c.query, nil)}
			p, err := ParsePage(r, "ak", false)
			if c.code == "" {
				if err != nil || p.Limit != c.limit {
					t.Fatalf("page %+v err %v", p, err)
				}
				return
			}
			e, ok := AsError(err)
			if !ok || e.Code != c.code || c.field != "" && e.Field != c.field {
				t.Fatalf("got %v, want %s naming %s", err, c.code, c.field)
			}
		})
	}
}

func TestNextPageURI(t *testing.T) {
	hr := httptest.NewRequest("GET", "/api_keys?limit=2", nil)
	hr.Host = "api.example.com"
	r := &Request{HTTP: hr}
	if got := NextPageURI(r, "/api_keys", Page{Limit: 2}, "ak_1", false); got != nil {
		t.Fatalf("no more items must give null, got %q", *got)
	}
	got := NextPageURI(r, "/api_keys", Page{Limit: 2, Filter: "obj.x"}, "ak_1", true)
	if want := "https://api.example.com/api_keys?before_id=ak_1&filter=obj.x&limit=2"; got == nil || *got != want {
		t.Fatalf("got %v, want %s", got, want)
	}
}

func TestListEnvelope(t *testing.T) {
	b, err := json.Marshal(List{Key: "keys", Items: nil, URI: "https://h/api_keys"})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"keys":[],"uri":"https://h/api_keys","next_page_uri":null}` {
		t.Fatalf("got %s", b)
	}
}

// The wrapper writes the envelope for every failure: status_code equals the status, details
// is a flat map with the operation id from the header, and a panic or plain error is an opaque 500.
func TestServerEnvelopes(t *testing.T) {
	s := &Server{}
	cases := []struct {
		name   string
		h      Handler
		status int
	}{
		{"api error", func(ctx context.Context, r *Request) (any, error) { return nil, Invalid("x", "bad x") }, 400},
		{"plain error", func(ctx context.Context, r *Request) (any, error) { return nil, errors.New("secret detail") }, 500},
		{"wrapped api error keeps its status", func(ctx context.Context, r *Request) (any, error) {
			return nil, fmt.Errorf("resource.update(x): %w", TooConcurrent("lost a race"))
		}, 429},
		{"wrapped not found", func(ctx context.Context, r *Request) (any, error) {
			return nil, fmt.Errorf("store.Get: %w", ErrNotFound)
		}, 404},
		{"panic", func(ctx context.Context, r *Request) (any, error) { panic("boom") }, 500},
		{"unverified success fails closed", func(ctx context.Context, r *Request) (any, error) { return map[string]any{}, nil }, 500},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			req := httptest.NewRequest("GET", "/x", nil)
			req.Header.Set("Authorization", "Bearer 2BxzRWYdf4fWcQOi6JZ7zaSN6Tc_7PvW3mHXzRpp3tUYxBNLU")
			s.Handle(http.StatusOK, c.h).ServeHTTP(w, req)
			var env struct {
				StatusCode int               `json:"status_code"`
				Msg        string            `json:"msg"`
				Details    map[string]string `json:"details"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
				t.Fatal(err)
			}
			if w.Code != c.status || env.StatusCode != c.status {
				t.Fatalf("status %d / body %d, want %d", w.Code, env.StatusCode, c.status)
			}
			if op := w.Header().Get("Ngrok-Operation-Id"); op == "" || env.Details["operation_id"] != op {
				t.Fatalf("operation id %q vs %q", op, env.Details["operation_id"])
			}
			if strings.Contains(w.Body.String(), "secret detail") || strings.Contains(w.Body.String(), "boom") {
				t.Fatal("internal detail leaked")
			}
		})
	}
}

// Non-canonical paths never reach the mux (which would redirect them, keeping the method): they
// are a 404 in the envelope, without a Location header.
func TestFrontRefusesNonCanonicalPaths(t *testing.T) {
	s := &Server{}
	mux := http.NewServeMux()
	mux.HandleFunc("DELETE /api_keys/{id}", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("GET /api_keys", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.Handle("/", s.NotFound())
	h := s.Front(mux)
	cases := []struct {
		method, target string
		status         int
	}{
		{"DELETE", "/api_keys/ak_1", 204},
		{"GET", "/api_keys", 200},
		{"DELETE", "/credentials/../api_keys/ak_1", 404},
		{"DELETE", "/credentials/%2e%2e/api_keys/ak_1", 404},
		{"DELETE", "/credentials/%2E%2E/api_keys/ak_1", 404},
		{"DELETE", "/api_keys/./ak_1", 404},
		{"DELETE", "//api_keys/ak_1", 404},
		{"DELETE", "/api_keys//ak_1", 404},
		{"GET", "/api_keys/", 404},
		{"GET", "/api_keys/..", 404},
		{"GET", "/..", 404},
		{"GET", "/.", 404},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.target, func(t *testing.T) {
			w := httptest.NewRecorder()
			req := httptest.NewRequest(c.method, "http://h"+c.target, nil)
			h.ServeHTTP(w, req)
			if w.Code != c.status || w.Header().Get("Location") != "" {
				t.Fatalf("%d (Location %q), want %d", w.Code, w.Header().Get("Location"), c.status)
			}
			if c.status == 404 {
				var env map[string]any
				if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil || env["status_code"] != float64(404) {
					t.Fatalf("no error envelope: %s", w.Body)
				}
			}
		})
	}
}

// Browsers get CORS as the platform answers it: any origin echoed with credentials allowed, a
// preflight answered before routing and without authentication, cacheable for at most ten
// minutes; other requests from an origin (errors too) carry the headers a page needs to read them.
func TestCORS(t *testing.T) {
	s := &Server{}
	mux := http.NewServeMux()
	mux.Handle("GET /api_keys", s.Handle(http.StatusOK, func(ctx context.Context, r *Request) (any, error) {
		return nil, Invalid("x", "bad x")
	}))
	mux.Handle("/", s.NotFound())
	h := s.Front(mux)
	const origin = "https://app.example.com:8443"
	cases := []struct {
		name, method, path string
		headers            map[string]string
		status             int
		allowOrigin        string // "" for no CORS headers
		allowHeaders       string // preflights only
	}{
		{"preflight", "OPTIONS", "/api_keys/ak_1", map[string]string{"Origin": origin, "Access-Control-Request-Method": "PATCH",
			"Access-Control-Request-Headers": "authorization,content-type, ngrok-version"}, 204, origin, "authorization, content-type, ngrok-version"},
		{"preflight without requested headers", "OPTIONS", "/api_keys", map[string]string{"Origin": "http://localhost:3000", "Access-Control-Request-Method": "GET"},
			204, "http://localhost:3000", corsAllowHeaders},
		{"preflight with a bad header list", "OPTIONS", "/api_keys", map[string]string{"Origin": origin, "Access-Control-Request-Method": "GET",
			"Access-Control-Request-Headers": "authorization, x-a b"}, 204, origin, corsAllowHeaders},
		{"preflight of an unknown path", "OPTIONS", "/nope/1", map[string]string{"Origin": origin, "Access-Control-Request-Method": "DELETE"}, 204, origin, corsAllowHeaders},
		{"OPTIONS that is not a preflight", "OPTIONS", "/api_keys", map[string]string{"Origin": origin}, 404, origin, ""},
		{"OPTIONS without an origin", "OPTIONS", "/api_keys", map[string]string{"Access-Control-Request-Method": "GET"}, 404, "", ""},
		{"request from an origin", "GET", "/api_keys", map[string]string{"Origin": origin}, 401, origin, ""},
		{"request without an origin", "GET", "/api_keys", nil, 401, "", ""},
		{"not-found path from an origin", "GET", "/api_keys/../x", map[string]string{"Origin": origin}, 404, origin, ""},
		{"origin with a path", "OPTIONS", "/api_keys", map[string]string{"Origin": origin + "/x", "Access-Control-Request-Method": "GET"}, 404, "", ""},
		{"origin null", "OPTIONS", "/api_keys", map[string]string{"Origin": "null", "Access-Control-Request-Method": "GET"}, 404, "", ""},
		{"origin of another scheme", "GET", "/api_keys", map[string]string{"Origin": "javascript:alert(1)"}, 401, "", ""},
		{"origin with credentials", "GET", "/api_keys", map[string]string{"Origin": "https://u:p@a.example.com"}, 401, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(c.method, "http://api.example.com"+c.path, nil)
			for k, v := range c.headers {
				req.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			got := w.Header()
			if w.Code != c.status {
				t.Fatalf("status %d, want %d: %s", w.Code, c.status, w.Body)
			}
			if got.Get("Access-Control-Allow-Origin") != c.allowOrigin {
				t.Fatalf("Access-Control-Allow-Origin %q, want %q", got.Get("Access-Control-Allow-Origin"), c.allowOrigin)
			}
			if got.Get("Ngrok-Operation-Id") == "" {
				t.Fatal("no Ngrok-Operation-Id")
			}
			if c.allowOrigin == "" {
				for k := range got {
					if strings.HasPrefix(k, "Access-Control-") {
						t.Fatalf("CORS header %s without a valid origin", k)
					}
				}
				return
			}
			if got.Get("Access-Control-Allow-Credentials") != "true" || !slices.Contains(got.Values("Vary"), "Origin") {
				t.Fatalf("credentials %q, vary %q", got.Get("Access-Control-Allow-Credentials"), got.Values("Vary"))
			}
			if c.status != 204 {
				if !strings.Contains(got.Get("Access-Control-Expose-Headers"), "Ngrok-Operation-Id") || got.Get("Access-Control-Max-Age") != "" {
					t.Fatalf("not a preflight: expose %q, max age %q", got.Get("Access-Control-Expose-Headers"), got.Get("Access-Control-Max-Age"))
				}
				return
			}
			if w.Body.Len() != 0 {
				t.Fatalf("preflight body %q", w.Body)
			}
			if got.Get("Access-Control-Allow-Methods") != "GET, POST, PUT, PATCH, DELETE, OPTIONS" || got.Get("Access-Control-Allow-Headers") != c.allowHeaders {
				t.Fatalf("methods %q, headers %q", got.Get("Access-Control-Allow-Methods"), got.Get("Access-Control-Allow-Headers"))
			}
			if age, err := strconv.Atoi(got.Get("Access-Control-Max-Age")); err != nil || age <= 0 || age > 600 {
				t.Fatalf("Access-Control-Max-Age %q, want 1..600 seconds", got.Get("Access-Control-Max-Age"))
			}
		})
	}
}

// FuzzFront sends arbitrary paths, methods and CORS headers through Server.Front: nothing
// panics, nothing redirects, a non-canonical path is a 404 in the envelope, and CORS headers
// echo only a well-formed origin.
func FuzzFront(f *testing.F) {
	for _, c := range [][4]string{
		{"GET", "/api_keys", "", ""}, {"DELETE", "/credentials/../api_keys/ak_1", "", ""},
		{"OPTIONS", "/api_keys", "https://a.example.com", "authorization,x-a"}, {"GET", "//x", "null", ""},
		{"OPTIONS", "/%2e%2e/x", "https://a.example.com/p", "a b"}, {"PATCH", "/a/./b", "http://[::1]:3000", ""},
	} {
		f.Add(c[0], c[1], c[2], c[3])
	}
	s := &Server{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api_keys", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.Handle("/", s.NotFound())
	h := s.Front(mux)
	f.Fuzz(func(t *testing.T, method, path, origin, requested string) {
		req, err := http.NewRequest(method, "http://api.example.com/", nil)
		if err != nil {
			return
		}
		req.URL.Path = path
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "GET")
		req.Header.Set("Access-Control-Request-Headers", requested)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code >= 300 && w.Code < 400 || w.Code >= 500 {
			t.Fatalf("%s %q: %d", method, path, w.Code)
		}
		if allow := w.Header().Get("Access-Control-Allow-Origin"); allow != "" && (allow != origin || !validOrigin(origin)) {
			t.Fatalf("allowed origin %q for %q", allow, origin)
		}
		if w.Code == http.StatusNoContent {
			return // a preflight
		}
		if !canonicalPath(path) && w.Code != http.StatusNotFound {
			t.Fatalf("non-canonical %q: %d", path, w.Code)
		}
	})
}

// DecodePatch names every optional member of the body, embedded ones in place, when none is
// supplied, with the family's empty-update code; a body supplying any member passes.
func TestDecodePatch(t *testing.T) {
	type policy struct {
		Authority string `json:"authority"`
	}
	type inner struct {
		Text
		Labels *map[string]string `json:"labels"`
		Policy Nullable[policy]   `json:"policy"`
	}
	type patch struct {
		URL *string `json:"url"`
		inner
		Bindings *[]string `json:"bindings"`
		Kind     *string   `json:"kind" patch:"refused"`
	}
	req := func(s string) *Request { return &Request{Body: []byte(s)} }
	var in patch
	err := TextCodes{Empty: "ERR_NGROK_506"}.DecodePatch(req(`{}`), &in)
	e, ok := AsError(err)
	if !ok || e.Code != "ERR_NGROK_506" || e.Field != "body" ||
		e.Msg != "the update supplies none of the changeable fields (url, description, metadata, labels, policy, bindings)" {
		t.Fatalf("empty body: %v", err)
	}
	if e, ok := AsError(DecodePatch(req(``), &patch{})); !ok || e.Code != CodeEmptyUpdate {
		t.Fatalf("no body: %v", e)
	}
	// A refused member is not named, but a body sending it passes for the caller to refuse.
	for _, s := range []string{`{"metadata":""}`, `{"labels":{}}`, `{"bindings":[]}`, `{"url":"u"}`, `{"kind":"k"}`} {
		if err := DecodePatch(req(s), &patch{}); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	if e, ok := AsError(DecodePatch(req(`{"nope":1}`), &patch{})); !ok || e.Field != "nope" {
		t.Fatalf("unknown member: %v", e)
	}
	// A Nullable member tells null (supplied, no value) from absent, and from a value.
	for body, want := range map[string]string{`{"policy":null}`: "set null", `{"policy":{}}`: "set {}", `{"policy":{"authority":"x"}}`: "set {x}"} {
		var in patch
		if err := DecodePatch(req(body), &in); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		got := "unset"
		switch {
		case in.Policy.Null():
			got = "set null"
		case in.Policy.Set:
			got = "set {" + in.Policy.Value.Authority + "}"
		}
		if got != want {
			t.Errorf("%s: %s, want %s", body, got, want)
		}
	}
	for body, field := range map[string]string{`{"policy":{"x":1}}`: "policy.x", `{"policy":3}`: "policy", `{"policy":{"authority":1}}`: "policy.authority"} {
		if e, ok := AsError(DecodePatch(req(body), &patch{})); !ok || e.Field != field {
			t.Errorf("%s: %v, want an error naming %s", body, e, field)
		}
	}
}
