package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tunnelapi/shared/app"
)

// Every descriptor a family package declares is listed in app.Functions, so no family is
// written and then never generated, deployed or served.
func TestEveryDescriptorIsListed(t *testing.T) {
	names, err := descriptorNames(filepath.Join(root, "shared", "app", "app.go"), app.Functions())
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, d := range app.Families {
		listed = append(listed, names[d].path+"."+names[d].name)
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
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
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
	slices.Sort(declared)
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
