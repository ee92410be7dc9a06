package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/resource"
)

// globals is what the template's Globals give every function, which a generated function
// repeats only where it differs.
type globals struct {
	Timeout     int `yaml:"Timeout"`
	MemorySize  int `yaml:"MemorySize"`
	Environment struct {
		Variables map[string]any `yaml:"Variables"`
	} `yaml:"Environment"`
}

// readGlobals reads the Globals of the template text; their Timeout must be
// app.DefaultTimeout, the budget of a family that sets none.
func readGlobals(text string) (globals, error) {
	var tpl struct {
		Globals struct {
			Function globals `yaml:"Function"`
		} `yaml:"Globals"`
	}
	if err := yaml.Unmarshal([]byte(text), &tpl); err != nil {
		return globals{}, err
	}
	g := tpl.Globals.Function
	if time.Duration(g.Timeout)*time.Second != app.DefaultTimeout || g.MemorySize == 0 {
		return g, fmt.Errorf("template.yaml's Globals: Timeout %ds, MemorySize %d; want app.DefaultTimeout (%v) and a memory size",
			g.Timeout, g.MemorySize, app.DefaultTimeout)
	}
	return g, nil
}

// templateValues are the values in template.yaml of the variables an HTTP function reads that
// the template sets per function; the Globals set the ones every function reads.
var templateValues = map[string]string{
	"RATE_LIMIT":            `{ "Ref": RateLimit }`,
	"BASE_DOMAIN":           `{ "Ref": BaseDomain }`,
	"DNS_ZONE":              `{ "Ref": DNSZone }`,
	"NAME_SERVERS":          `{ "Ref": NameServers }`,
	"REGIONS":               `{ "Ref": Regions }`,
	"ADDR_POOLS":            `{ "Ref": AddrPools }`,
	"DEPLOYMENT_ACCOUNT_ID": `{ "Ref": AWS::AccountId }`,
}

// unsetInAWS are the variables an HTTP function reads that the template leaves unset: Lambda
// sets the region and credentials, and the others keep their defaults.
var unsetInAWS = []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
	"AWS_SESSION_TOKEN", "SEAL_KEY_FILE", "OUTBOX_RETENTION"}

// environment is what the template sets for the function f beyond the Globals: every
// variable its parser (config.HTTPLoader of the sections its families read) asks for, in the
// order of config.Vars.
func environment(f app.Function, g globals) ([]string, error) {
	var sections []config.Section
	for _, d := range f.Families {
		sections = append(sections, d.Reads...)
	}
	asked := map[string]bool{}
	_, _ = config.HTTPLoader(sections...)(func(name string) (string, bool) {
		asked[name] = true
		return "", false
	})
	var out []string
	for _, v := range config.Vars {
		if _, global := g.Environment.Variables[v.Name]; !asked[v.Name] || global || slices.Contains(unsetInAWS, v.Name) {
			continue
		}
		value, ok := templateValues[v.Name]
		if !ok {
			return nil, fmt.Errorf("%s reads %s, which has no value in template.yaml: add it to templateValues (shared/app/gen)", f.Name, v.Name)
		}
		out = append(out, fmt.Sprintf("%s: %s", v.Name, value))
	}
	return out, nil
}

// tableActions are the DynamoDB actions the families fs call, in a fixed order: every request
// reads (GetItem, BatchGetItem), counts against the rate limit (UpdateItem) and a create
// writes a transaction of puts, updates and condition checks; a list adds Query and a delete or
// an update (which may release a guard) DeleteItem. A family with routes beyond the five
// operations may call anything.
func tableActions(fs []*resource.Descriptor) []string {
	query, del := false, false
	for _, d := range fs {
		extra := len(d.Routes()) > len(operationsOf(d))
		query = query || extra || d.Offers(resource.OpList)
		del = del || extra || d.Offers(resource.OpDelete) || d.Offers(resource.OpUpdate)
	}
	out := []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"}
	if del {
		out = append(out, "dynamodb:DeleteItem")
	}
	out = append(out, "dynamodb:ConditionCheckItem")
	if query {
		out = append(out, "dynamodb:Query")
	}
	return out
}

// operationsOf are the routes of d's five operations that it serves, as Descriptor.Routes
// writes them.
func operationsOf(d *resource.Descriptor) []string {
	var out []string
	for _, o := range []struct {
		op           resource.Operation
		method, path string
	}{
		{resource.OpCreate, "POST", d.Path}, {resource.OpList, "GET", d.Path}, {resource.OpGet, "GET", d.Path + "/{id}"},
		{resource.OpUpdate, "PATCH", d.Path + "/{id}"}, {resource.OpDelete, "DELETE", d.Path + "/{id}"},
	} {
		if d.Offers(o.op) {
			out = append(out, o.method+" "+o.path)
		}
	}
	return out
}

// httpFunction is the resource of the HTTP function f in template.yaml: its code, settings,
// role and routes, all from its descriptors (names gives their Go names).
func httpFunction(f app.Function, names map[*resource.Descriptor]qualified, g globals) (string, error) {
	if !strings.HasSuffix(f.Name, "Function") {
		return "", fmt.Errorf("%s: a function's logical id ends in Function", f.Name)
	}
	var b strings.Builder
	var served []string
	seals, opens := false, false
	for _, d := range f.Families {
		served = append(served, fmt.Sprintf("%s.%s (%s)", names[d].pkg(), names[d].name, d.Path))
		seals, opens = seals || d.Secrets()&resource.Seals != 0, opens || d.Secrets()&resource.Opens != 0
	}
	b.WriteString(yamlComment("  ", "Serves "+and(served)+"."))
	fmt.Fprintf(&b, `  %[1]s:
    Type: AWS::Serverless::Function
    Metadata: { BuildMethod: makefile }
    Properties:
      CodeUri: .
      LoggingConfig: { LogGroup: { "Ref": %[1]sLogGroup } }
`, f.Name)
	if mb := f.MemoryMB; mb != 0 && mb != g.MemorySize {
		fmt.Fprintf(&b, "      MemorySize: %d\n", mb)
	}
	if f.Budget() != app.DefaultTimeout {
		if f.Budget()%time.Second != 0 {
			return "", fmt.Errorf("%s: Timeout %v is not whole seconds", f.Name, f.Budget())
		}
		fmt.Fprintf(&b, "      Timeout: %d\n", f.Budget()/time.Second)
	}
	env, err := environment(f, g)
	if err != nil {
		return "", err
	}
	if len(env) > 0 {
		b.WriteString("      Environment:\n        Variables:\n")
		for _, e := range env {
			fmt.Fprintf(&b, "          %s\n", e)
		}
	}
	b.WriteString("      Policies:\n        - Statement:\n")
	statement := func(actions []string, resource string) {
		fmt.Fprintf(&b, "            - Effect: Allow\n              Action: [%s]\n              Resource: %s\n", strings.Join(actions, ", "), resource)
	}
	statement(tableActions(f.Families), `{ "Fn::GetAtt": [Table, Arn] }`)
	var kms []string
	switch {
	case seals && opens:
		b.WriteString("            # Seals secrets and opens them (its descriptors' Seals and Opens).\n")
		kms = []string{"kms:GenerateDataKey", "kms:Decrypt"}
	case seals:
		b.WriteString("            # Seals secrets; it never opens them (its descriptors' Seals, no Opens).\n")
		kms = []string{"kms:GenerateDataKey"}
	case opens:
		b.WriteString("            # Opens secrets; it never seals new ones (its descriptors' Opens, no Seals).\n")
		kms = []string{"kms:Decrypt"}
	}
	if len(kms) > 0 {
		statement(kms, `{ "Fn::GetAtt": [SealKey, Arn] }`)
	}
	b.WriteString("      Events:\n")
	events, err := httpEvents(f)
	if err != nil {
		return "", err
	}
	b.WriteString(events)
	return b.String(), nil
}

// httpEvents are the HttpApi events of f: every route its families serve, and the CORS
// preflight if f is app.PreflightFunction.
func httpEvents(f app.Function) (string, error) {
	var b strings.Builder
	seen := map[string]string{}
	event := func(name, route string) error {
		if other, dup := seen[name]; dup {
			return fmt.Errorf("%s: %s and %s are both named %s", f.Name, other, route, name)
		}
		seen[name] = route
		method, path, _ := strings.Cut(route, " ")
		if strings.ContainsAny(path, "{}") {
			path = `"` + path + `"`
		}
		fmt.Fprintf(&b, "        %s: { Type: HttpApi, Properties: { ApiId: { \"Ref\": HttpApi }, Method: %s, Path: %s } }\n", name, method, path)
		return nil
	}
	for _, d := range f.Families {
		for _, route := range d.Routes() {
			if err := event(eventName(f, route), route); err != nil {
				return "", err
			}
		}
	}
	if f.Name == app.PreflightFunction {
		b.WriteString("        # Every CORS preflight, whatever its path: the handler answers it before routing. The\n")
		b.WriteString("        # HttpApi has no CorsConfiguration, which cannot echo any origin with credentials.\n")
		if err := event("Preflight", app.PreflightRoute); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// eventName names the event of route ("METHOD /path") of f: a verb (Create, List, Get, Update,
// Replace, Delete) and the route's literal path segments beyond the path of f's first family,
// a segment singular where it names one item (before a wildcard, or last of a POST):
// "Create" for POST /api_keys, "ReplaceRouteBackend" for PUT
// /edges/https/{edge_id}/routes/{id}/backend on HTTPSEdgesFunction.
func eventName(f app.Function, route string) string {
	method, path, _ := strings.Cut(route, " ")
	verb := map[string]string{"POST": "Create", "GET": "Get", "PATCH": "Update", "PUT": "Replace", "DELETE": "Delete"}[method]
	for _, d := range f.Families {
		if method == "GET" && path == d.Path {
			verb = "List"
		}
	}
	rest := strings.TrimPrefix(path, f.Families[0].Path)
	if rest != "" && !strings.HasPrefix(rest, "/") {
		rest = path
	}
	segs := strings.Split(strings.Trim(rest, "/"), "/")
	name := verb
	for i, s := range segs {
		if s == "" || strings.HasPrefix(s, "{") {
			continue
		}
		last := i == len(segs)-1
		if (!last && strings.HasPrefix(segs[i+1], "{")) || (last && method == "POST") {
			s = singular(s)
		}
		for _, w := range strings.Split(s, "_") {
			name += camel(w)
		}
	}
	return name
}

// singular is the singular of the plural word s, as the platform's paths use them.
func singular(s string) string {
	if t, ok := strings.CutSuffix(s, "ies"); ok {
		return t + "y"
	}
	return strings.TrimSuffix(s, "s")
}

// initialisms are the words of paths a Go name writes in capitals.
var initialisms = map[string]string{"api": "API", "dns": "DNS", "http": "HTTP", "https": "HTTPS", "id": "ID",
	"ip": "IP", "oauth": "OAuth", "oidc": "OIDC", "saml": "SAML", "ssh": "SSH", "tcp": "TCP", "tls": "TLS"}

// camel is the word w capitalised as in a Go name.
func camel(w string) string {
	if c, ok := initialisms[w]; ok {
		return c
	}
	return strings.ToUpper(w[:1]) + w[1:]
}

// yamlComment is text as YAML comment lines indented by indent, wrapped before 100 columns.
func yamlComment(indent, text string) string {
	var b strings.Builder
	line := indent + "#"
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > 99 && line != indent+"#" {
			b.WriteString(line + "\n")
			line = indent + "#"
		}
		line += " " + w
	}
	b.WriteString(line + "\n")
	return b.String()
}
