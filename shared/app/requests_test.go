package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"tunnelapi/shared/app"
	"tunnelapi/shared/testing/testkit"
)

// Requests the API does not accept get the same 4xx from the local server and from the Lambda
// handler behind API Gateway: two Authorization headers (which API Gateway joins with a comma)
// are a 400, and a path that is not canonical is a 404 in the envelope, never a redirect to
// another resource.
func TestRequestsTheAPIDoesNotAccept(t *testing.T) {
	s := testkit.Shared(t, app.Registers()...)
	a := s.NewAccount(t)
	key := a.Do(t, "POST", "/api_keys", map[string]any{"description": "target"}).Expect(t, http.StatusCreated)["id"].(string)
	lambda := s.Deps.Handler(app.Registers()...)
	host := strings.TrimPrefix(s.Server.URL, "http://")

	// local sends the request to the local server with each header value as its own line.
	local := func(method, path string, auth []string) (int, http.Header, []byte) {
		req, err := http.NewRequest(method, s.Server.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range auth {
			req.Header.Add("Authorization", v)
		}
		req.Header.Set("Ngrok-Version", "2")
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, b
	}
	// viaGateway sends it as API Gateway delivers it: repeated headers joined with commas.
	viaGateway := func(method, path string, auth []string) (int, http.Header, []byte) {
		ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RawPath: path,
			Headers: map[string]string{"authorization": strings.Join(auth, ","), "ngrok-version": "2", "host": host},
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
		return res.StatusCode, h, []byte(res.Body)
	}
	one := []string{"Bearer " + a.Token}
	cases := []struct {
		name, method, path string
		auth               []string
		status             int
		code, field        string
	}{
		{"two Authorization headers", "GET", "/api_keys", []string{"Bearer " + a.Token, "Bearer " + a.Token}, 400, "ERR_NGROK_201", "Authorization"},
		{"two different Authorization headers", "GET", "/api_keys", []string{"Bearer " + a.Token, "Basic YTpi"}, 400, "ERR_NGROK_201", "Authorization"},
		{"dot-dot segment", "DELETE", "/credentials/../api_keys/" + key, one, 404, "", ""},
		{"encoded dot-dot segment", "DELETE", "/credentials/%2e%2e/api_keys/" + key, one, 404, "", ""},
		{"dot segment", "DELETE", "/api_keys/./" + key, one, 404, "", ""},
		{"double slash", "DELETE", "//api_keys/" + key, one, 404, "", ""},
		{"inner double slash", "DELETE", "/api_keys//" + key, one, 404, "", ""},
	}
	for _, deployment := range []struct {
		name string
		do   func(method, path string, auth []string) (int, http.Header, []byte)
	}{{"local", local}, {"lambda", viaGateway}} {
		for _, c := range cases {
			t.Run(deployment.name+"/"+c.name, func(t *testing.T) {
				status, h, body := deployment.do(c.method, c.path, c.auth)
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
		if status, _, body := deployment.do("GET", "/api_keys/"+key, one); status != http.StatusOK {
			t.Fatalf("%s: the key is gone or unreadable after the refused requests: %d %s", deployment.name, status, body)
		}
	}
}
