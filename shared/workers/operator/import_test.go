package operator_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"tunnelapi/shared/app"
	"tunnelapi/shared/workers/operator"
)

// listener is an HTTP server that counts what reaches it and answers every request as a create
// would (201 with a new id), or with answer when set.
type listener struct {
	*httptest.Server
	got    atomic.Int64
	tokens atomic.Int64 // requests that carried an Authorization header
}

func newListener(t *testing.T, answer http.HandlerFunc) *listener {
	l := &listener{}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.got.Add(1)
		if r.Header.Get("Authorization") != "" {
			l.tokens.Add(1)
		}
		if answer != nil {
			answer(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"bot_2Bxz7mWl3jk8UpN5sQ0vR9tYc1a","name":"moved"}`)
	}))
	t.Cleanup(l.Close)
	return l
}

// export is an export of a tenant: its tenant line, then one line per path, each an object.
func export(t *testing.T, paths ...string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	if err := enc.Encode(operator.Line{Tenant: &operator.Exported{ID: "ac_2Bxz7mWl3jk8UpN5sQ0vR9tYc1a", AdminUserID: "usr_2Bxz7mWl3jk8UpN5sQ0vR9tYc1a"}}); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if err := enc.Encode(operator.Line{Path: p, Object: map[string]any{"id": "bot_2Bxz7mWl3jk8UpN5sQ0vR9tYc1b", "name": "moved"}}); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// An import refuses, before any request leaves, a file with a line whose path is not the
// collection of a family that creates: a URL of another origin, a network-path reference, a
// userinfo that the base URL would become, dot segments, another route. The error names the
// line; neither the deployment nor the other host receives anything, though the line before
// it is a good one. The same file without that line sends its create to the deployment.
func TestImportRefusesPathsOutsideTheFamilies(t *testing.T) {
	api, evil := newListener(t, nil), newListener(t, nil)
	evilHost := strings.TrimPrefix(evil.URL, "http://")
	into := operator.Exported{ID: "ac_2Bxz7mWl3jk8UpN5sQ0vR9tYc1c", AdminUserID: "usr_2Bxz7mWl3jk8UpN5sQ0vR9tYc1c"}
	c := &operator.TenantAPI{Base: api.URL, Token: "the tenant's admin token", HTTP: api.Client()}
	for _, path := range []string{
		evil.URL + "/bot_users",
		"https://" + evilHost + "/c",
		"//" + evilHost + "/x",
		"@" + evilHost + "/x",
		"../api_keys",
		"/../api_keys",
		"/bot_users/../api_keys",
		"/./bot_users",
		"/%2e%2e/api_keys",
		"bot_users",
		"/bot_users/",
		"/bot_users?x=1",
		"/BOT_USERS",
		"/operator/tenants",
		"/edges/https/edghts_2Bxz7mWl3jk8UpN5sQ0vR9tYc1a/routes",
	} {
		t.Run(path, func(t *testing.T) {
			var out bytes.Buffer
			err := operator.Import(t.Context(), c, app.Families, into, strings.NewReader(export(t, "/bot_users", path)), &out)
			if err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), path) {
				t.Errorf("import: %v; want an error naming line 3 and its path", err)
			}
			if out.Len() > 0 {
				t.Errorf("import printed %q", out.String())
			}
			if n, m := api.got.Load(), evil.got.Load(); n != 0 || m != 0 {
				t.Fatalf("requests sent: %d to the deployment, %d to the other host", n, m)
			}
		})
	}
	var out bytes.Buffer
	if err := operator.Import(t.Context(), c, app.Families, into, strings.NewReader(export(t, "/bot_users")), &out); err != nil {
		t.Fatal(err)
	}
	if api.got.Load() != 1 || api.tokens.Load() != 1 || !strings.Contains(out.String(), `"path":"/bot_users"`) {
		t.Fatalf("the good import: %d requests (%d with the token), printed %q", api.got.Load(), api.tokens.Load(), out.String())
	}
}

// The client sends a request only to its base URL's origin: a path that would reach another
// host (a URL of another origin, "//host", "@host" joined as userinfo, a relative reference) or
// another route (a dot segment) is refused without sending anything, a next_page_uri of the
// base's own origin is followed, and a redirect to another host is the answer, not followed, so
// the credentials go nowhere else.
func TestClientStaysOnTheBaseOrigin(t *testing.T) {
	evil := newListener(t, nil)
	base := newListener(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			w.Header().Set("Location", evil.URL+"/stolen")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTemporaryRedirect)
			io.WriteString(w, `{}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"path":"`+r.URL.Path+`"}`)
	})
	evilHost := strings.TrimPrefix(evil.URL, "http://")
	c := &operator.TenantAPI{Base: base.URL, Token: "secret", HTTP: base.Client()}
	for _, path := range []string{
		evil.URL + "/x", "https://" + evilHost + "/x", "//" + evilHost + "/x", "@" + evilHost + "/x",
		"x", "../x", "/a/../x", "/%2e%2e/x", "/a/./x", "http://user@" + strings.TrimPrefix(base.URL, "http://") + "/x",
	} {
		if status, _, err := c.Do(t.Context(), "GET", path, nil); err == nil {
			t.Errorf("GET %s: %d, not refused", path, status)
		}
	}
	if base.got.Load() != 0 || evil.got.Load() != 0 {
		t.Fatalf("requests sent: %d to the base, %d to the other host", base.got.Load(), evil.got.Load())
	}
	for _, path := range []string{"/api_keys?limit=1", base.URL + "/api_keys?limit=1&before_id=ak_2Bxz7mWl3jk8UpN5sQ0vR9tYc1a"} {
		status, body, err := c.Do(t.Context(), "GET", path, nil)
		if err != nil || status != http.StatusOK || body["path"] != "/api_keys" {
			t.Errorf("GET %s: %d %v %v", path, status, body, err)
		}
	}
	if status, _, err := c.Do(t.Context(), "GET", "/moved", nil); err != nil || status != http.StatusTemporaryRedirect {
		t.Errorf("a redirect answered %d, %v; want the 307 itself", status, err)
	}
	if evil.got.Load() != 0 {
		t.Fatalf("the redirect was followed to the other host (%d requests, %d with the token)", evil.got.Load(), evil.tokens.Load())
	}
}
