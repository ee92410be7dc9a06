package app_test

import (
	"slices"
	"testing"

	"tunnelapi/shared/app"
)

// Every function of template.yaml belongs to a function of app.Families, app.Workers or app.Operator: one
// left behind, or added without its family, fails here (the mains, the Makefile's list and the
// sample folders are generated from the same lists; shared/app/gen checks them).
func TestNoTemplateFunctionOutsideTheLists(t *testing.T) {
	fns := map[string]bool{}
	for _, f := range app.Functions() {
		fns[f.Name] = true
	}
	for _, w := range append(slices.Clone(app.Workers), app.Operator) {
		fns[w.Name] = true
	}
	checked := 0
	for name, res := range readTemplate(t).Resources {
		if res.Type != "AWS::Serverless::Function" {
			continue
		}
		checked++
		if !fns[name] {
			t.Errorf("template.yaml function %s belongs to no function of app.Families or app.Workers", name)
		}
	}
	if checked < len(fns) {
		t.Errorf("template.yaml declares %d functions, the lists %d", checked, len(fns))
	}
}
