package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"tunnelapi/shared/app"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/frpplugin"
	"tunnelapi/shared/workers/operator"
)

// pathParam is a route pattern's wildcard ({id}, {name…}).
var pathParam = regexp.MustCompile(`\{[^}]*\}`)

// traversals are the paths that are not canonical made from the path of one route: a ".."
// segment after it, a ".." segment before it (plain and percent-encoded), a "." segment and an
// empty one inside it.
func traversals(path string) []string {
	first, rest, _ := strings.Cut(path[1:], "/")
	inner := "/" + first + "/./" + rest
	if rest == "" {
		inner = "/" + first + "/."
	}
	return []string{path + "/../x", "/x/.." + path, "/x/%2e%2e" + path, "/x/%2E%2E" + path, inner, "/" + path,
		"/" + first + "//" + rest}
}

// traversalCase is one request whose path is not canonical, and the handler it goes to.
type traversalCase struct {
	method, path, to string
}

// traversalCases derives the cases from every route of every family (to the function serving
// it) and of the operator (to "operator").
func traversalCases() []traversalCase {
	var out []traversalCase
	add := func(route, to string) {
		method, pattern, _ := strings.Cut(route, " ")
		for _, p := range traversals(pathParam.ReplaceAllString(pattern, "x_1")) {
			out = append(out, traversalCase{method, p, to})
		}
	}
	for _, f := range app.Functions() {
		for _, d := range f.Families {
			for _, r := range d.Routes() {
				add(r, f.Name)
			}
		}
	}
	for _, r := range operator.Routes {
		add(r.Method+" "+r.Pattern, "operator")
	}
	return out
}

// Paths that are not canonical are a 404 in the error envelope, never a redirect, before any
// credential is verified: from the local server's handler (the families' API beside the
// operator's routes, withOperator) and on the Lambda path from each HTTP function's handler and
// the operator function's (for an operator principal, whom API Gateway authorized), for every
// route of every family and of the operator.
func TestNonCanonicalPathsAreNotFound(t *testing.T) {
	s := testkit.App(t)
	o := &operator.Operator{DB: s.DB, Collections: operator.CollectionsOf(app.Families),
		Principals: operator.Principals{"arn:aws:iam::123456789012:root"}}
	refuse := func(*http.Request, []byte) error { return errors.New("the operator's authorization ran") }
	local := httptest.NewServer(withOperator(s.Deps.Mux(app.Families...), o, &frpplugin.Plugin{DB: s.DB}, refuse))
	defer local.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	lambdas := map[string]func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error){
		"operator": o.Lambda(),
	}
	for _, f := range app.Functions() {
		lambdas[f.Name] = s.Deps.Handler(f.Families...)
	}
	host := strings.TrimPrefix(local.URL, "http://")
	// check fails unless a response is a 404 in the envelope without a Location header.
	check := func(where string, c traversalCase, status int, h http.Header, body []byte) {
		var env struct {
			Status  int               `json:"status_code"`
			Details map[string]string `json:"details"`
		}
		if err := json.Unmarshal(body, &env); status != http.StatusNotFound || err != nil || env.Status != http.StatusNotFound ||
			env.Details["operation_id"] == "" || h.Get("Location") != "" {
			t.Errorf("%s %s %s: %d (Location %q) %.200s", where, c.method, c.path, status, h.Get("Location"), body)
		}
	}
	cases := traversalCases()
	for _, c := range cases {
		req, err := http.NewRequest(c.method, local.URL+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		check("local", c, res.StatusCode, res.Header, body)

		ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RawPath: c.path, Headers: map[string]string{"host": host},
			RequestContext: events.APIGatewayV2HTTPRequestContext{DomainName: host,
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: c.method, Path: c.path, Protocol: "HTTP/1.1", SourceIP: "203.0.113.7"}}}
		if c.to == "operator" { // API Gateway authorized the caller with IAM
			ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
				IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{AccessKey: "AKIDOPERATOR", UserARN: "arn:aws:iam::123456789012:user/operator"}}
		}
		out, err := lambdas[c.to](context.Background(), ev)
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		for k, v := range out.Headers {
			h.Set(k, v)
		}
		for k, vs := range out.MultiValueHeaders {
			h[http.CanonicalHeaderKey(k)] = vs
		}
		check("lambda "+c.to, c, out.StatusCode, h, []byte(out.Body))
	}
	t.Logf("%d cases, each to the local server and to its function", len(cases))
}
