package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type body struct {
	Description *string   `json:"description"`
	ACL         *[]string `json:"acl"`
	Active      *bool     `json:"active"`
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
		{"unknown field", `{"nope":1}`, CodeUnknownField, "nope"},
		{"malformed", `{"description":`, CodeUnparseableBody, "body"},
		{"syntax", `{"description" "x"}`, CodeUnparseableBody, "body"},
		{"wrong type string", `{"description":5}`, CodeBadFieldValue, "description"},
		{"wrong type bool", `{"active":"yes"}`, CodeBadFieldValue, "active"},
		{"wrong type list", `{"acl":"x"}`, CodeBadFieldValue, "acl"},
		{"array body", `[1]`, CodeUnparseableBody, "body"},
		{"trailing data", `{}{}`, CodeUnparseableBody, "body"},
		{"invalid utf8", "{\"description\":\"\xff\"}", CodeUnparseableBody, "body"},
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

func FuzzDecodeBytes(f *testing.F) {
	for _, s := range []string{`{}`, `{"description":"x","acl":["*"],"active":true}`, `[`, `{"a":1}`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var b body
		err := DecodeBytes(in, &b)
		if err == nil {
			return
		}
		e, ok := AsError(err)
		if !ok || e.Status != 400 || e.Field == "" {
			t.Fatalf("decode error is not a 400 naming a field: %#v", err)
		}
	})
}

func TestBearerToken(t *testing.T) {
	good := "2BxzRWYdf4fWcQOi6JZ7zaSN6Tc_7PvW3mHXzRpp3tUYxBNLU"
	cases := []struct {
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
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := bearerToken(c.header)
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
			if !ok || e.Code != c.code || e.Field != c.field {
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
