package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"tunnelapi/shared/app"
	"tunnelapi/shared/families/access"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/resource"
	sampleset "tunnelapi/shared/testing/samples"
)

// A new family is its package and one line in the list of functions in app.go. Given the
// fixture family (widgetsDescriptor: no update, a route of its own, a part kind, sealing,
// reading the deployment settings) and that line, with a longer timeout, the generator reads
// its Go name from the line and writes everything else: its main, its functions.mk entry, its
// function in template.yaml with its settings, role and routes, its log group, alarm and
// dashboard lines, its skeleton samples, its event kinds in audit.AuditKinds and its collection
// in the operator's main, which an erasure reads; registering it adds the routes the template
// sends it. Its set-up is data in its own folder of sample events (checkFixtureSetup).
func TestNewFamily(t *testing.T) {
	dir := t.TempDir()
	tpl, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "template.yaml"), tpl, 0o644); err != nil {
		t.Fatal(err)
	}
	// The line, as app.go would hold it, and the Function it declares.
	const line = `	{Name: "FixtureWidgetsFunction", Dir: "fixture_widgets", Timeout: 20 * time.Second, Families: of(fixture.WidgetsDescriptor)},` + "\n"
	fn := app.Function{Name: "FixtureWidgetsFunction", Dir: "fixture_widgets", Timeout: 20 * time.Second, Families: []*resource.Descriptor{widgetsDescriptor}}
	src, err := os.ReadFile(filepath.Join(root, "shared", "app", "app.go"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	start := strings.Index(text, "var functions = []Function{\n")
	if start < 0 {
		t.Fatal("app.go has no list of functions")
	}
	end := start + strings.Index(text[start:], "\n}\n") + 1
	text = text[:end] + line + text[end:]
	text = strings.Replace(text, "import (\n", "import (\n\t\"tunnelapi/shared/families/fixture\"\n", 1)
	appGo := filepath.Join(dir, "app.go")
	if err := os.WriteFile(appGo, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	functions := append(slices.Clone(app.Functions()), fn)
	names, err := descriptorNames(appGo, functions)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names[widgetsDescriptor], (qualified{"tunnelapi/shared/families/fixture", "WidgetsDescriptor"}); got != want {
		t.Fatalf("the fixture's Go name read from its line is %v, want %v", got, want)
	}
	files, err := generate(dir, functions, append(slices.Clone(app.Workers), app.Operator), names)
	if err != nil {
		t.Fatal(err)
	}
	d := widgetsDescriptor
	rec := &recorder{}
	d.Register(nil, rec, &api.Server{})
	if want := []string{"POST /fixture_widgets", "GET /fixture_widgets", "GET /fixture_widgets/{id}", "DELETE /fixture_widgets/{id}", "POST /fixture_widgets/{id}/polish"}; !slices.Equal(rec.routes, want) || !slices.Equal(d.Routes(), want) {
		t.Errorf("the fixture registers %v and declares %v, want %v", rec.routes, d.Routes(), want)
	}
	if op := string(files[filepath.Join("functions", app.Operator.Dir, "main.go")]); !strings.Contains(op, `{Prefix: "fxw"}, // /fixture_widgets`) {
		t.Errorf("the operator's main does not list the fixture's collection:\n%s", op)
	}

	kinds := string(files[kindsFile])
	for _, want := range []string{"\t\"fixture_widget\": Created | Deleted,\n", "\t\"fixture_widget_part\": AllVerbs,\n", "\t\"ip_policy\": AllVerbs,\n"} {
		if !strings.Contains(strings.Join(strings.Fields(kinds), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("%s lacks %q:\n%s", kindsFile, strings.TrimSpace(want), kinds)
		}
	}

	main := string(files[filepath.Join("functions", "fixture_widgets", "main.go")])
	for _, want := range []string{`"tunnelapi/shared/families/fixture"`, `"tunnelapi/shared/platform/seal/kmsseal"`, "serve.MainWithKMS(kmsseal.NewSealing, fixture.WidgetsDescriptor)"} {
		if !strings.Contains(main, want) {
			t.Errorf("functions/fixture_widgets/main.go lacks %s:\n%s", want, main)
		}
	}
	if mk := string(files["functions.mk"]); !strings.Contains(mk, "FixtureWidgetsFunction:fixture_widgets") {
		t.Errorf("functions.mk lacks FixtureWidgetsFunction:fixture_widgets:\n%s", mk)
	}
	skeleton, ok := files[filepath.Join("events", "fixture_widgets", "1-create.json")]
	if !ok {
		t.Fatal("no skeleton sample events/fixture_widgets/1-create.json")
	}
	checkFixtureSetup(t, dir, string(skeleton))

	var got struct {
		Resources map[string]struct {
			Type       string `yaml:"Type"`
			Properties struct {
				Timeout     int `yaml:"Timeout"`
				Environment struct {
					Variables map[string]any `yaml:"Variables"`
				} `yaml:"Environment"`
				Policies []struct {
					Statement []struct {
						Action []string `yaml:"Action"`
					} `yaml:"Statement"`
				} `yaml:"Policies"`
				Events map[string]struct {
					Properties struct {
						Method string `yaml:"Method"`
						Path   string `yaml:"Path"`
					} `yaml:"Properties"`
				} `yaml:"Events"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	text = string(files["template.yaml"])
	if err := yaml.Unmarshal([]byte(text), &got); err != nil {
		t.Fatal(err)
	}
	res := got.Resources["FixtureWidgetsFunction"]
	if res.Type != "AWS::Serverless::Function" || res.Properties.Timeout != 20 {
		t.Errorf("FixtureWidgetsFunction is a %q with Timeout %d, want a function with Timeout 20", res.Type, res.Properties.Timeout)
	}
	if _, ok := res.Properties.Environment.Variables["DEPLOYMENT_ACCOUNT_ID"]; !ok {
		t.Errorf("FixtureWidgetsFunction's environment %v lacks DEPLOYMENT_ACCOUNT_ID, which the section it reads parses", res.Properties.Environment.Variables)
	}
	var actions []string
	for _, p := range res.Properties.Policies {
		for _, st := range p.Statement {
			actions = append(actions, st.Action...)
		}
	}
	for _, want := range []string{"dynamodb:Query", "dynamodb:DeleteItem", "kms:GenerateDataKey"} {
		if !strings.Contains(strings.Join(actions, " "), want) {
			t.Errorf("FixtureWidgetsFunction is granted %v, not %s", actions, want)
		}
	}
	if strings.Contains(strings.Join(actions, " "), "kms:Decrypt") {
		t.Errorf("FixtureWidgetsFunction is granted %v: kms:Decrypt although it does not open", actions)
	}
	routes := map[string]string{}
	for name, e := range res.Properties.Events {
		routes[e.Properties.Method+" "+e.Properties.Path] = name
	}
	for _, r := range d.Routes() {
		if routes[r] == "" {
			t.Errorf("FixtureWidgetsFunction has no event for %s (it has %v)", r, routes)
		}
	}
	if len(routes) != len(d.Routes()) {
		t.Errorf("FixtureWidgetsFunction has events %v, its descriptor serves %v", routes, d.Routes())
	}
	for _, r := range []string{"FixtureWidgetsFunctionLogGroup", "FixtureWidgetsFunctionFailingAlarm"} {
		if _, ok := got.Resources[r]; !ok {
			t.Errorf("template.yaml has no %s", r)
		}
	}
	for _, want := range []string{`"${FixtureWidgetsFunctionFailingAlarm.Arn}",`, `["AWS/Lambda", "Errors", "FunctionName", "${FixtureWidgetsFunction}"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the dashboard does not show %s", want)
		}
	}
}

// checkFixtureSetup shows the fixture family's set-up, in its own folder of sample events as its
// author would write it (testdata/fixture_widgets/setup.json): the IP policy its widgets name,
// created first, and a fresh name, which its create sample (the skeleton, completed) refers to.
func checkFixtureSetup(t *testing.T, root, skeleton string) {
	t.Helper()
	setup, err := os.ReadFile(filepath.Join("testdata", "fixture_widgets", app.SetupFile))
	if err != nil {
		t.Fatal(err)
	}
	create := strings.Replace(skeleton, `{\"description\": \"sample\"}`, `{\"name\": \"{{widget_name}}\", \"ip_policy_id\": \"{{ip_policy_id}}\"}`, 1)
	if create == skeleton {
		t.Fatalf("the skeleton create sample has no description body to complete:\n%s", skeleton)
	}
	events := filepath.Join(root, "events", "fixture_widgets")
	if err := os.MkdirAll(events, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{app.SetupFile: string(setup), "1-create.json": create} {
		if err := os.WriteFile(filepath.Join(events, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if files, err := app.SampleFiles(root, "fixture_widgets"); err != nil || len(files) != 1 {
		t.Errorf("the fixture's sample events are %v (%v), want its create alone: the set-up is no sample", files, err)
	}
	var posted []string
	vars, err := sampleset.Setup(t.Context(), root, "fixture_widgets", sampleset.Makers{Create: func(_ context.Context, path string, body any) (map[string]any, error) {
		posted = append(posted, fmt.Sprint("POST ", path, " ", body))
		return map[string]any{"id": "ipp_fixture"}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"POST /ip_policies map[description:the widgets' policy]"}; !slices.Equal(posted, want) {
		t.Errorf("the fixture's set-up posted %q, want %q", posted, want)
	}
	var ev struct{ Body string }
	if err := json.Unmarshal([]byte(app.FillSample(create, vars)), &ev); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Name       string `json:"name"`
		IPPolicyID string `json:"ip_policy_id"`
	}
	if err := json.Unmarshal([]byte(ev.Body), &body); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(body.Name, "widget-") || strings.Contains(body.Name, "{{") || body.IPPolicyID != "ipp_fixture" {
		t.Errorf("the filled create sample sends %+v, want a fresh widget-… name and ip_policy_id ipp_fixture", body)
	}
}

// Two families sharing an id prefix (their resources would share a collection) or a path, or
// one without an event kind, are refused before anything is written.
func TestDescriptorsAreDistinct(t *testing.T) {
	clash := *access.IPPoliciesDescriptor
	clash.Path = "/fixture_clash"
	kindless := *access.IPPoliciesDescriptor
	kindless.Path, kindless.Prefix, kindless.EventKind = "/fixture_kindless", "fxk", ""
	twice := *access.IPPoliciesDescriptor
	twice.Prefix = "fxt"
	for _, c := range []struct {
		d    *resource.Descriptor
		want string
	}{{&clash, `share the id prefix "ipp"`}, {&kindless, "needs a Path, a Prefix and an EventKind"}, {&twice, "two families serve /ip_policies"}} {
		err := checkDescriptors(append(app.Families[:len(app.Families):len(app.Families)], c.d))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %s", c.d.Path, err, c.want)
		}
	}
	if err := checkDescriptors(app.Families); err != nil {
		t.Errorf("app.Families: %v", err)
	}
}
