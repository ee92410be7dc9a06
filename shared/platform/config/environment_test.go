package config_test

import (
	"path/filepath"
	"slices"
	"testing"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/testing/testkit"
)

// root is the checkout, from this package.
const root = "../../.."

// template.yaml's hand-written functions (app.Workers, app.Operator) and package config's
// declaration agree: every variable one gets is declared as read by its kind of process (a
// variable no code reads, or one the declaration does not know, fails), and every variable its
// kind needs without a default (Var.Needed) is set. The HTTP functions' environment is what
// their parsers read, written by shared/app/gen.
func TestTemplateEnvironmentIsDeclared(t *testing.T) {
	got := testkit.TemplateVariables(t, filepath.Join(root, "template.yaml"))
	checked := 0
	workers := append(slices.Clone(app.Workers), app.Operator)
	for _, w := range workers {
		for _, v := range got[w.Name] {
			if !slices.ContainsFunc(config.Vars, func(d config.Var) bool { return d.Name == v && d.By&w.Kind != 0 }) {
				t.Errorf("template.yaml gives %s %s, which package config does not declare as read by the %s", w.Name, v, w.Kind)
			}
		}
		for _, d := range config.Vars {
			if d.Needed&w.Kind == 0 {
				continue
			}
			checked++
			if !slices.Contains(got[w.Name], d.Name) {
				t.Errorf("template.yaml does not set %s for %s (the %s cannot work without it)", d.Name, w.Name, w.Kind)
			}
		}
	}
	if checked < len(workers) {
		t.Fatalf("checked %d needed variables of %d workers", checked, len(workers))
	}
}
