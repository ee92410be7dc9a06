package samtemplate_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"tunnelapi/infra/samtemplate"
)

const root = "../.."

var transformed = sync.OnceValues(func() (*samtemplate.Template, error) {
	if err := samtemplate.Available(); err != nil {
		return nil, err
	}
	return samtemplate.Transform(filepath.Join(root, "template.yaml"))
})

// deployed returns a copy of template.yaml as the SAM transform makes it (transformed once per
// run). Without python3 and the transform it skips, unless REQUIRE_STACK says infra/tools.sh ran
// (make test), where it fails.
func deployed(t *testing.T) *samtemplate.Template {
	t.Helper()
	tpl, err := transformed()
	if err != nil {
		if os.Getenv("REQUIRE_STACK") == "" && samtemplate.Available() != nil {
			t.Skip("no SAM transform here (python3 -m pip install cfn-lint==1.51.0)")
		}
		t.Fatal(err)
	}
	raw, err := json.Marshal(tpl)
	if err != nil {
		t.Fatal(err)
	}
	var c samtemplate.Template
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// dig follows keys (map keys, or list indexes given as ints) into v; nil where one is missing.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// getAttOf returns the resource a {"Fn::GetAtt": [name, attr]} (or "name.attr") names.
func getAttOf(v any) string {
	switch a := dig(v, "Fn::GetAtt").(type) {
	case []any:
		if len(a) > 0 {
			return fmt.Sprint(a[0])
		}
	case string:
		name, _, _ := strings.Cut(a, ".")
		return name
	}
	return ""
}

var subRef = regexp.MustCompile(`\$\{([^}!][^}]*)\}`)

// subNames are the names a Fn::Sub string refers to as ${Name} or ${Name.Attr}.
func subNames(s string) []string {
	var out []string
	for _, m := range subRef.FindAllStringSubmatch(s, -1) {
		name, _, _ := strings.Cut(m[1], ".")
		out = append(out, name)
	}
	return out
}

// linked maps each function's package (./functions/<dir>) to the packages it links.
var linked = sync.OnceValues(func() (map[string][]string, error) {
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "./functions/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list ./functions/...: %v", err)
	}
	m := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		m["./functions/"+filepath.Base(f[0])] = f[1:]
	}
	return m, nil
})

// links reports whether functions/<dir> links package pkg.
func links(t *testing.T, dir, pkg string) bool {
	t.Helper()
	m, err := linked()
	if err != nil {
		t.Fatal(err)
	}
	deps, ok := m["./functions/"+dir]
	if !ok {
		t.Fatalf("go list knows no ./functions/%s", dir)
	}
	return slices.Contains(deps, pkg)
}
