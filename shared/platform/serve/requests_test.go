package serve_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"gopkg.in/yaml.v3"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/testing/testkit"
)

// root is the checkout, from this package.
const root = "../../.."

type template struct {
	Resources map[string]struct {
		Type       string `yaml:"Type"`
		Properties struct {
			Events map[string]struct {
				Type       string `yaml:"Type"`
				Properties struct {
					Method                string   `yaml:"Method"`
					Path                  string   `yaml:"Path"`
					FunctionResponseTypes []string `yaml:"FunctionResponseTypes"`
				} `yaml:"Properties"`
			} `yaml:"Events"`
		} `yaml:"Properties"`
	} `yaml:"Resources"`
}

func readTemplate(t *testing.T) template {
	b, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tpl template
	if err := yaml.Unmarshal(b, &tpl); err != nil {
		t.Fatal(err)
	}
	return tpl
}

// deployment sends one request to one way of serving the API and returns the response.
type deployment struct {
	name string
	do   func(t *testing.T, method, path string, headers http.Header) (int, http.Header, []byte)
}

// deployments are the local server of s and the Lambda handler of families as API Gateway invokes
// it: repeated request headers joined with commas, as API Gateway delivers them.
func deployments(s *testkit.Stack, families ...*resource.Descriptor) []deployment {
	lambda := s.Deps.Handler(families...)
	host := strings.TrimPrefix(s.Server.URL, "http://")
	local := func(t *testing.T, method, path string, headers http.Header) (int, http.Header, []byte) {
		req, err := http.NewRequest(method, s.Server.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = headers.Clone()
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, b
	}
	gateway := func(t *testing.T, method, path string, headers http.Header) (int, http.Header, []byte) {
		evh := map[string]string{"host": host}
		for k, vs := range headers {
			evh[strings.ToLower(k)] = strings.Join(vs, ",")
		}
		ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RawPath: path, Headers: evh,
			RequestContext: events.APIGatewayV2HTTPRequestContext{DomainName: host,
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "203.0.113.7"}}}
		res, err := lambda(context.Background(), ev)
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		for k, v := range res.Headers {
			h.Set(k, v)
		}
		for k, vs := range res.MultiValueHeaders {
			h[http.CanonicalHeaderKey(k)] = vs
		}
		return res.StatusCode, h, []byte(res.Body)
	}
	return []deployment{{"local", local}, {"lambda", gateway}}
}

func headers(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// Requests the API does not accept get the same 4xx from the local server and from the Lambda
// handler behind API Gateway: two Authorization headers (which API Gateway joins with a comma)
// are a 400, and a path that is not canonical is a 404 in the envelope, never a redirect to
// another resource.
func TestRequestsTheAPIDoesNotAccept(t *testing.T) {
	s, a := testkit.AppAccount(t)
	key := a.Do(t, "POST", "/api_keys", map[string]any{"description": "target"}).Expect(t, http.StatusCreated)["id"].(string)
	one := headers("Authorization", "Bearer "+a.Token, "Ngrok-Version", "2")
	cases := []struct {
		name, method, path string
		headers            http.Header
		status             int
		code, field        string
	}{
		{"two Authorization headers", "GET", "/api_keys", headers("Authorization", "Bearer "+a.Token, "Authorization", "Bearer "+a.Token), 400, "ERR_NGROK_201", "Authorization"},
		{"two different Authorization headers", "GET", "/api_keys", headers("Authorization", "Bearer "+a.Token, "Authorization", "Basic YTpi"), 400, "ERR_NGROK_201", "Authorization"},
		{"dot-dot segment", "DELETE", "/credentials/../api_keys/" + key, one, 404, "", ""},
		{"encoded dot-dot segment", "DELETE", "/credentials/%2e%2e/api_keys/" + key, one, 404, "", ""},
		{"dot segment", "DELETE", "/api_keys/./" + key, one, 404, "", ""},
		{"double slash", "DELETE", "//api_keys/" + key, one, 404, "", ""},
		{"inner double slash", "DELETE", "/api_keys//" + key, one, 404, "", ""},
	}
	for _, d := range deployments(s, app.Families...) {
		for _, c := range cases {
			t.Run(d.name+"/"+c.name, func(t *testing.T) {
				status, h, body := d.do(t, c.method, c.path, c.headers)
				var env struct {
					Code    string            `json:"error_code"`
					Status  int               `json:"status_code"`
					Details map[string]string `json:"details"`
				}
				if err := json.Unmarshal(body, &env); err != nil {
					t.Fatalf("%d %q is not an error envelope", status, body)
				}
				if status != c.status || env.Status != c.status || env.Code != c.code || env.Details["field"] != c.field || h.Get("Location") != "" {
					t.Fatalf("%d (Location %q) %s, want %d %s naming %q", status, h.Get("Location"), body, c.status, c.code, c.field)
				}
				if env.Details["operation_id"] == "" || env.Details["operation_id"] != h.Get("Ngrok-Operation-Id") {
					t.Fatalf("operation id %q vs header %q", env.Details["operation_id"], h.Get("Ngrok-Operation-Id"))
				}
			})
		}
		// Nothing was deleted, and the canonical request still works.
		if status, _, body := d.do(t, "GET", "/api_keys/"+key, one); status != http.StatusOK {
			t.Fatalf("%s: the key is gone or unreadable after the refused requests: %d %s", d.name, status, body)
		}
	}
}

// One ServeMux pattern per path (Deps.Mux) answers as a pattern per route did, on the local
// server and through the Lambda handler: a method the path does not serve is the 404 in the
// envelope, a HEAD is served by the path's GET, and the path's own methods work.
func TestMethodsOfAPath(t *testing.T) {
	s, a := testkit.AppAccount(t)
	key := a.Do(t, "POST", "/api_keys", map[string]any{"description": "target"}).Expect(t, http.StatusCreated)["id"].(string)
	auth := headers("Authorization", "Bearer "+a.Token, "Ngrok-Version", "2")
	for _, d := range deployments(s, app.Families...) {
		for _, m := range []string{"PUT", "POST"} {
			status, h, body := d.do(t, m, "/api_keys/"+key, auth)
			var env struct {
				Status int               `json:"status_code"`
				Code   string            `json:"error_code"`
				Det    map[string]string `json:"details"`
			}
			if err := json.Unmarshal(body, &env); err != nil || status != http.StatusNotFound || env.Status != http.StatusNotFound ||
				env.Det["operation_id"] == "" || env.Det["operation_id"] != h.Get("Ngrok-Operation-Id") {
				t.Errorf("%s: %s /api_keys/{id}: %d %s, want the 404 envelope", d.name, m, status, body)
			}
		}
		if status, _, body := d.do(t, "HEAD", "/api_keys/"+key, auth); status != http.StatusOK {
			t.Errorf("%s: HEAD /api_keys/{id}: %d %s, want its GET's 200", d.name, status, body)
		}
		if status, _, body := d.do(t, "GET", "/api_keys/"+key, auth); status != http.StatusOK {
			t.Errorf("%s: GET /api_keys/{id}: %d %s", d.name, status, body)
		}
	}
}

// A browser's preflight is answered the same by the local server and by the function
// template.yaml routes every OPTIONS request to, and the actual request then carries the CORS
// headers from either.
func TestCORSPreflight(t *testing.T) {
	var routed []string
	for name, res := range readTemplate(t).Resources {
		for _, ev := range res.Properties.Events {
			if ev.Properties.Method == "OPTIONS" {
				routed = append(routed, name+" "+ev.Properties.Method+" "+ev.Properties.Path)
			}
		}
	}
	if want := app.PreflightFunction + " " + app.PreflightRoute; len(routed) != 1 || routed[0] != want {
		t.Fatalf("template.yaml routes OPTIONS as %v, want only %s", routed, want)
	}
	var served []*resource.Descriptor
	for _, f := range app.Functions() {
		if f.Name == app.PreflightFunction {
			served = f.Families
		}
	}
	if served == nil {
		t.Fatalf("%s is not in app.Functions", app.PreflightFunction)
	}
	s, a := testkit.AppAccount(t)
	const origin = "https://console.example.com"
	preflight := headers("Origin", origin, "Access-Control-Request-Method", "PATCH",
		"Access-Control-Request-Headers", "authorization,content-type,ngrok-version")
	for _, d := range deployments(s, served...) {
		// Paths of other functions too: API Gateway sends every preflight to one function.
		for _, path := range []string{"/api_keys/ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc", "/event_subscriptions/esb_x/sources/api_key_created.v0", "/ip_policies"} {
			status, h, _ := d.do(t, "OPTIONS", path, preflight)
			if status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != origin || h.Get("Access-Control-Allow-Credentials") != "true" ||
				!strings.Contains(h.Get("Access-Control-Allow-Methods"), "PATCH") || h.Get("Access-Control-Allow-Headers") != "authorization, content-type, ngrok-version" ||
				h.Get("Access-Control-Max-Age") != "600" {
				t.Fatalf("%s: preflight of %s: %d %v", d.name, path, status, h)
			}
		}
		status, h, _ := d.do(t, "GET", "/api_keys", headers("Origin", origin, "Authorization", "Bearer "+a.Token, "Ngrok-Version", "2"))
		if status != http.StatusOK || h.Get("Access-Control-Allow-Origin") != origin || !strings.Contains(h.Get("Access-Control-Expose-Headers"), "Ngrok-Operation-Id") {
			t.Fatalf("%s: request from an origin: %d %v", d.name, status, h)
		}
	}
}
