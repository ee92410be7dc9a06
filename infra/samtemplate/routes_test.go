package samtemplate_test

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"tunnelapi/infra/samtemplate"
	"tunnelapi/shared/app"
	"tunnelapi/shared/workers/frpplugin"
	"tunnelapi/shared/workers/operator"
)

// apiRoutes maps each route ("METHOD /path") of the HTTP API's generated OpenAPI body to the
// function its Lambda integration invokes.
func apiRoutes(tpl *samtemplate.Template) (map[string]string, []string) {
	routes := map[string]string{}
	var problems []string
	found := false
	for name, r := range tpl.Resources {
		if r.Type != "AWS::ApiGatewayV2::Api" {
			continue
		}
		found = true
		paths, _ := dig(r.Properties, "Body", "paths").(map[string]any)
		for path, ops := range paths {
			for method, op := range ops.(map[string]any) {
				if method == "x-amazon-apigateway-any-method" {
					method = "ANY"
				}
				route := strings.ToUpper(method) + " " + path
				uri, _ := dig(op, "x-amazon-apigateway-integration", "uri", "Fn::Sub").(string)
				var fn string
				for _, n := range subNames(uri) {
					if r, ok := tpl.Resources[n]; ok && r.Type == "AWS::Lambda::Function" {
						fn = n
					}
				}
				if fn == "" {
					problems = append(problems, fmt.Sprintf("%s: %s invokes no function of the template (%q)", name, route, uri))
					continue
				}
				routes[route] = fn
			}
		}
	}
	if !found {
		problems = append(problems, "the transformed template has no AWS::ApiGatewayV2::Api")
	}
	return routes, problems
}

// codeRoutes maps each route the descriptors serve to the function their descriptors name,
// with the CORS preflight route app names.
func codeRoutes() (map[string]string, []string) {
	routes := map[string]string{app.PreflightRoute: app.PreflightFunction}
	for _, r := range operator.Routes {
		routes[r.Method+" "+r.Pattern] = app.Operator.Name
	}
	routes[frpplugin.Route] = app.TunnelPlugin.Name
	var problems []string
	for _, f := range app.Functions() {
		if len(f.Families) > 0 && len(f.Families[0].Routes()) == 0 {
			problems = append(problems, f.Name+" serves no route")
		}
		for _, d := range f.Families {
			for _, r := range d.Routes() {
				if o, dup := routes[r]; dup {
					problems = append(problems, fmt.Sprintf("%s is served by %s and %s", r, o, f.Name))
				}
				routes[r] = f.Name
			}
		}
	}
	return routes, problems
}

// authorizationProblems holds the operator's routes, and only them, to IAM authorization: a tenant's
// bearer key never reaches them, and the operator's IAM credentials reach nothing else.
func authorizationProblems(tpl *samtemplate.Template) []string {
	var problems []string
	operatorRoute := map[string]bool{}
	for _, r := range operator.Routes {
		operatorRoute[strings.ToUpper(r.Method)+" "+r.Pattern] = true
	}
	for _, r := range tpl.Resources {
		if r.Type != "AWS::ApiGatewayV2::Api" {
			continue
		}
		paths, _ := dig(r.Properties, "Body", "paths").(map[string]any)
		for path, ops := range paths {
			for method, op := range ops.(map[string]any) {
				route := strings.ToUpper(method) + " " + path
				security, _ := dig(op, "security").([]any)
				iam := false
				for _, s := range security {
					if m, ok := s.(map[string]any); ok && m["AWS_IAM"] != nil {
						iam = true
					}
				}
				if iam != operatorRoute[route] {
					problems = append(problems, fmt.Sprintf("%s: IAM authorization %v, operator route %v", route, iam, operatorRoute[route]))
				}
			}
		}
	}
	return problems
}

// routeProblems compares the deployed routes with the served ones.
func routeProblems(tpl *samtemplate.Template) []string {
	deployed, problems := apiRoutes(tpl)
	problems = append(problems, authorizationProblems(tpl)...)
	served, more := codeRoutes()
	problems = append(problems, more...)
	for _, r := range slices.Sorted(maps.Keys(served)) {
		switch fn, ok := deployed[r]; {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s, served by %s, is not a route of the HTTP API", r, served[r]))
		case fn != served[r]:
			problems = append(problems, fmt.Sprintf("%s reaches %s; %s serves it", r, fn, served[r]))
		}
	}
	for _, r := range slices.Sorted(maps.Keys(deployed)) {
		if _, ok := served[r]; !ok {
			problems = append(problems, fmt.Sprintf("the HTTP API routes %s to %s, whose descriptors do not serve it", r, deployed[r]))
		}
	}
	sort.Strings(problems)
	return problems
}

// Every route of the deployed HTTP API reaches the function whose descriptors serve it, and
// every route a descriptor serves is deployed: a missing one answers 404 in AWS only.
func TestRoutesReachTheirFunctions(t *testing.T) {
	tpl := deployed(t)
	for _, p := range routeProblems(tpl) {
		t.Error(p)
	}
	if routes, _ := apiRoutes(tpl); len(routes) < len(app.Families) {
		t.Fatalf("only %d routes deployed for %d families: this check sees too little", len(routes), len(app.Families))
	}
}
