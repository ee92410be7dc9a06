package testkit

import (
	"maps"
	"os"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"
)

// TemplateVariables reads the template at path as SAM applies it: the names of the environment
// variables it gives each function (Globals' and its own), sorted, by logical id.
func TemplateVariables(t testing.TB, path string) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type env struct {
		Environment struct {
			Variables map[string]any `yaml:"Variables"`
		} `yaml:"Environment"`
	}
	var tpl struct {
		Globals struct {
			Function env `yaml:"Function"`
		} `yaml:"Globals"`
		Resources map[string]struct {
			Type       string `yaml:"Type"`
			Properties env    `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for name, res := range tpl.Resources {
		if res.Type != "AWS::Serverless::Function" {
			continue
		}
		vars := maps.Clone(tpl.Globals.Function.Environment.Variables)
		if vars == nil {
			vars = map[string]any{}
		}
		maps.Copy(vars, res.Properties.Environment.Variables)
		out[name] = slices.Sorted(maps.Keys(vars))
	}
	return out
}
