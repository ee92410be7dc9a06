package app_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/resource"
)

// Each family's request budget (resource.Descriptor.Budget, the deadline api.Server gives every
// request) is its function's Timeout in template.yaml, the Globals' when it sets none.
func TestBudgetsAreTemplateTimeouts(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct {
		Globals struct {
			Function struct {
				Timeout int `yaml:"Timeout"`
			} `yaml:"Function"`
		} `yaml:"Globals"`
		Resources map[string]struct {
			Properties struct {
				Timeout int `yaml:"Timeout"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(b, &tpl); err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(tpl.Globals.Function.Timeout) * time.Second; got != resource.DefaultTimeout {
		t.Errorf("Globals Timeout %v, resource.DefaultTimeout %v", got, resource.DefaultTimeout)
	}
	for _, d := range app.Families {
		want := time.Duration(tpl.Resources[d.Function].Properties.Timeout) * time.Second
		if want == 0 {
			want = resource.DefaultTimeout
		}
		if d.Budget() != want {
			t.Errorf("%s: budget %v, template.yaml's %s Timeout %v", d.Path, d.Budget(), d.Function, want)
		}
	}
}
