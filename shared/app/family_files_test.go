package app_test

import (
	"go/ast"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"tunnelapi/shared/app"
)

// deployed lists every Lambda's logical id and folder: the HTTP functions, then the workers.
func deployed() map[string]string {
	out := map[string]string{}
	for _, f := range app.Functions() {
		out[f.Name] = f.Dir
	}
	for _, w := range app.Workers {
		out[w.Name] = w.Dir
	}
	return out
}

// Adding a family is its package, its descriptor in app.Families, its main, its template
// block, its Makefile entry and its sample events. The tests beside this one fail when one of
// those is missing for a listed family; this one fails when a family's descriptor is not
// listed, or when a main, a sample folder, a Makefile entry or a template function belongs to
// no listed function (left behind, or added without the rest).
func TestNothingOutsideTheFunctionList(t *testing.T) {
	fns := deployed()
	dirs := map[string]bool{}
	for _, dir := range fns {
		dirs[dir] = true
	}
	for _, folder := range []string{"functions", "events"} {
		entries, err := os.ReadDir(filepath.Join(root, folder))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() && !dirs[e.Name()] {
				t.Errorf("%s/%s belongs to no function of app.Families or app.Workers", folder, e.Name())
			}
		}
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	list := regexp.MustCompile(`(?s)\nFUNCTIONS\s*:=(.*?[^\\])\n`).FindSubmatch(mk)
	if list == nil {
		t.Fatal("the Makefile has no FUNCTIONS list")
	}
	entries := strings.Fields(strings.ReplaceAll(string(list[1]), "\\", " "))
	for _, e := range entries {
		name, dir, _ := strings.Cut(e, ":")
		if fns[name] != dir {
			t.Errorf("Makefile FUNCTIONS entry %s belongs to no function of app.Families or app.Workers", e)
		}
	}
	if len(entries) != len(fns) {
		t.Errorf("Makefile FUNCTIONS has %d entries, there are %d functions", len(entries), len(fns))
	}
	for name, res := range readTemplate(t).Resources {
		if _, ok := fns[name]; res.Type == "AWS::Serverless::Function" && !ok {
			t.Errorf("template.yaml function %s belongs to no function of app.Families or app.Workers", name)
		}
	}
}

// Every descriptor a family package declares is listed in app.Families, so no family is
// written and then never served.
func TestEveryDescriptorIsListed(t *testing.T) {
	var listed []string
	for _, d := range app.Families {
		listed = append(listed, descriptorName(t, d))
	}
	files, err := filepath.Glob(filepath.Join(root, "shared", "families", "*", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		file, _ := parseGo(t, path)
		pkg := "tunnelapi/shared/families/" + filepath.Base(filepath.Dir(path))
		for _, decl := range file.Decls {
			ast.Inspect(decl, func(n ast.Node) bool {
				spec, ok := n.(*ast.ValueSpec)
				if !ok || len(spec.Values) != len(spec.Names) {
					return true
				}
				for i, v := range spec.Values {
					name := spec.Names[i].Name
					// A descriptor is a &resource.Descriptor{...} literal or, when a helper
					// builds it, a variable named as the convention says (<Name>Descriptor).
					if spec.Names[i].IsExported() && (isDescriptorLiteral(v) || strings.HasSuffix(name, "Descriptor")) {
						declared = append(declared, pkg+"."+name)
					}
				}
				return false
			})
		}
	}
	if len(declared) == 0 {
		t.Fatal("no descriptor found under shared/families: the check would prove nothing")
	}
	sort.Strings(declared)
	for _, d := range declared {
		if !slices.Contains(listed, d) {
			t.Errorf("%s is declared but not listed in app.Families", d)
		}
	}
}

// isDescriptorLiteral reports whether e is &resource.Descriptor{...}.
func isDescriptorLiteral(e ast.Expr) bool {
	u, ok := e.(*ast.UnaryExpr)
	if !ok {
		return false
	}
	lit, ok := u.X.(*ast.CompositeLit)
	if !ok {
		return false
	}
	sel, ok := lit.Type.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Descriptor"
}
