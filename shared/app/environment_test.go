package app_test

import (
	"path/filepath"
	"slices"
	"testing"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/testing/testkit"
)

// template.yaml and package config's declaration agree: every variable a function gets is
// declared as read by its kind of process (a variable no code reads, or one the declaration
// does not know, fails), and every variable a kind of function needs without a default
// (Var.Needed) is set for each function of that kind.
func TestTemplateEnvironmentIsDeclared(t *testing.T) {
	kinds := map[string]config.Process{}
	for _, f := range app.Functions() {
		kinds[f.Name] = config.ByHTTP
	}
	for _, w := range append(slices.Clone(app.Workers), app.Operator) {
		kinds[w.Name] = w.Kind
	}
	got := testkit.TemplateVariables(t, filepath.Join(root, "template.yaml"))
	for name, vars := range got {
		kind, ok := kinds[name]
		if !ok {
			t.Errorf("template.yaml has function %s, which shared/app does not list", name)
			continue
		}
		for _, v := range vars {
			if !slices.ContainsFunc(config.Vars, func(d config.Var) bool { return d.Name == v && d.By&kind != 0 }) {
				t.Errorf("template.yaml gives %s %s, which package config does not declare as read by the %s", name, v, kind)
			}
		}
	}
	checked := 0
	for name, kind := range kinds {
		for _, d := range config.Vars {
			if d.Needed&kind == 0 {
				continue
			}
			checked++
			if !slices.Contains(got[name], d.Name) {
				t.Errorf("template.yaml does not set %s for %s (the %s cannot work without it)", d.Name, name, kind)
			}
		}
	}
	if checked < len(kinds) {
		t.Fatalf("checked %d needed variables of %d functions", checked, len(kinds))
	}
}
