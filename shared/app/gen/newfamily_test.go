package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"tunnelapi/shared/app"
	"tunnelapi/shared/families/access"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/resource"
)

// A family is its package and its line in app.Families: given one more descriptor (a fixture
// serving the IP policies' hooks under its own path, id prefix, event kind, function and
// folder, without update, with a part kind, sealing, reading the deployment settings, with a
// longer timeout), the generator writes everything else for it: its main, its functions.mk
// entry, its function in template.yaml with its settings, role and routes, its log group, alarm
// and dashboard lines, its skeleton samples and its event kinds in audit.AuditKinds. (Its
// prefix needs nothing generated: an erasure reads the families' prefixes, as
// TestErasureReadsEveryFamilysCollection in shared/app shows.)
func TestNewFamilyIsGenerated(t *testing.T) {
	dir := t.TempDir()
	tpl, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "template.yaml"), tpl, 0o644); err != nil {
		t.Fatal(err)
	}
	names, err := descriptorNames(filepath.Join(root, "shared", "app", "app.go"))
	if err != nil {
		t.Fatal(err)
	}
	widgets := *access.IPPoliciesDescriptor
	widgets.Path, widgets.Function, widgets.Dir = "/fixture_widgets", "FixtureWidgetsFunction", "fixture_widgets"
	widgets.Prefix, widgets.EventKind, widgets.PartEventKinds = "fxw", "fixture_widget", []string{"fixture_widget_part"}
	widgets.Operations = resource.OpCreate | resource.OpGet | resource.OpList | resource.OpDelete
	widgets.Seals, widgets.Reads, widgets.Timeout = true, []config.Section{config.DeploymentSettings}, 20*time.Second
	names[&widgets] = qualified{"tunnelapi/shared/families/fixture", "WidgetsDescriptor"}
	files, err := generate(dir, app.FunctionsOf(append(app.Families[:len(app.Families):len(app.Families)], &widgets)), append(slices.Clone(app.Workers), app.Operator), names)
	if err != nil {
		t.Fatal(err)
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
	if _, ok := files[filepath.Join("events", "fixture_widgets", "1-create.json")]; !ok {
		t.Error("no skeleton sample events/fixture_widgets/1-create.json")
	}

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
	text := string(files["template.yaml"])
	if err := yaml.Unmarshal([]byte(text), &got); err != nil {
		t.Fatal(err)
	}
	fn := got.Resources["FixtureWidgetsFunction"]
	if fn.Type != "AWS::Serverless::Function" || fn.Properties.Timeout != 20 {
		t.Errorf("FixtureWidgetsFunction is a %q with Timeout %d, want a function with Timeout 20", fn.Type, fn.Properties.Timeout)
	}
	if _, ok := fn.Properties.Environment.Variables["DEPLOYMENT_ACCOUNT_ID"]; !ok {
		t.Errorf("FixtureWidgetsFunction's environment %v lacks DEPLOYMENT_ACCOUNT_ID, which the section it reads parses", fn.Properties.Environment.Variables)
	}
	var actions []string
	for _, p := range fn.Properties.Policies {
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
	for name, e := range fn.Properties.Events {
		routes[e.Properties.Method+" "+e.Properties.Path] = name
	}
	for _, r := range widgets.Routes() {
		if routes[r] == "" {
			t.Errorf("FixtureWidgetsFunction has no event for %s (it has %v)", r, routes)
		}
	}
	if len(routes) != len(widgets.Routes()) {
		t.Errorf("FixtureWidgetsFunction has events %v, its descriptor serves %v", routes, widgets.Routes())
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
