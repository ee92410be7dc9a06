package samtemplate_test

import "testing"

// Every function of template.yaml builds with the Makefile (BuildMethod makefile): what `sam
// build` runs, calling the build-<logical id> target the generated FUNCTIONS list defines.
func TestFunctionsBuildWithTheMakefile(t *testing.T) {
	tpl := templateMap(t)
	for name, res := range tpl["Resources"].(map[string]any) {
		r := res.(map[string]any)
		if r["Type"] != "AWS::Serverless::Function" {
			continue
		}
		if dig(r, "Metadata", "BuildMethod") != "makefile" {
			t.Errorf("%s is not built with the Makefile", name)
		}
	}
}
