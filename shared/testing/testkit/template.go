package testkit

import (
	"maps"
	"os"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"
)

// TemplateFunction is what a template gives one function as SAM applies it: its own settings,
// the Globals' where it sets none, and the Globals' environment variables under its own.
type TemplateFunction struct {
	Timeout     int `yaml:"Timeout"`
	MemorySize  int `yaml:"MemorySize"`
	Environment struct {
		Variables map[string]any `yaml:"Variables"`
	} `yaml:"Environment"`
	// Policies are the function's own inline policies (SAM has no Globals for them).
	Policies []struct {
		Statement []TemplateStatement `yaml:"Statement"`
	} `yaml:"Policies"`
}

// TemplateStatement is one statement of a policy, its Action and Resource as YAML decodes them:
// a string, a list, or an intrinsic function's map.
type TemplateStatement struct {
	Effect   string `yaml:"Effect"`
	Action   any    `yaml:"Action"`
	Resource any    `yaml:"Resource"`
}

// TemplateFunctions reads the template at path: each function (AWS::Serverless::Function) by
// logical id.
func TemplateFunctions(t testing.TB, path string) map[string]TemplateFunction {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct {
		Globals struct {
			Function TemplateFunction `yaml:"Function"`
		} `yaml:"Globals"`
		Resources map[string]struct {
			Type       string           `yaml:"Type"`
			Properties TemplateFunction `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	g := tpl.Globals.Function
	out := map[string]TemplateFunction{}
	for name, res := range tpl.Resources {
		if res.Type != "AWS::Serverless::Function" {
			continue
		}
		f := res.Properties
		if f.Timeout == 0 {
			f.Timeout = g.Timeout
		}
		if f.MemorySize == 0 {
			f.MemorySize = g.MemorySize
		}
		vars := maps.Clone(g.Environment.Variables)
		if vars == nil {
			vars = map[string]any{}
		}
		maps.Copy(vars, f.Environment.Variables)
		f.Environment.Variables = vars
		out[name] = f
	}
	return out
}

// TemplateVariables reads the template at path as SAM applies it: the names of the environment
// variables it gives each function (Globals' and its own), sorted, by logical id.
func TemplateVariables(t testing.TB, path string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for name, f := range TemplateFunctions(t, path) {
		out[name] = slices.Sorted(maps.Keys(f.Environment.Variables))
	}
	return out
}

// TemplateMap reads the template at path as generic YAML.
func TemplateMap(t testing.TB, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tpl map[string]any
	if err := yaml.Unmarshal(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	return tpl
}

// Dig follows keys through nested string-keyed maps (nil when one is missing).
func Dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
