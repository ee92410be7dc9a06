package app_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tiers are shared/'s tiers in the order a request flows through them; a package may import only
// from its own tier or the ones before it (tests may import anything).
var tiers = []string{"platform", "rules", "families", "workers", "app", "testing"}

func tierOf(pkg string) int {
	rest, ok := strings.CutPrefix(pkg, "tunnelapi/shared/")
	if !ok {
		return -1
	}
	first, _, _ := strings.Cut(rest, "/")
	for i, t := range tiers {
		if t == first {
			return i
		}
	}
	return len(tiers)
}

// Every package under shared/ sits in a named tier and imports nothing from a later one.
func TestTiersImportOnlyEarlierTiers(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "tunnelapi/shared/...").Output()
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		own := tierOf(p.ImportPath)
		if own == len(tiers) {
			t.Errorf("%s is in no tier of %v", p.ImportPath, tiers)
			continue
		}
		for _, imp := range p.Imports {
			if tier := tierOf(imp); tier > own {
				t.Errorf("%s (%s) imports %s (%s)", p.ImportPath, tiers[own], imp, tiers[tier])
			}
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("checked only %d packages", checked)
	}
}

// Every type of the families (their hooks types above all) has methods of one receiver kind,
// value or pointer, so a reader never asks which copy a method works on.
func TestFamiliesUseOneReceiverKindPerType(t *testing.T) {
	kinds := map[string]map[bool][]string{} // "dir.Type" → pointer? → methods
	err := filepath.WalkDir(filepath.Join(root, "shared", "families"), func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv == nil {
				continue
			}
			typ := fd.Recv.List[0].Type
			star, pointer := typ.(*ast.StarExpr)
			if pointer {
				typ = star.X
			}
			switch g := typ.(type) {
			case *ast.IndexExpr:
				typ = g.X
			case *ast.IndexListExpr:
				typ = g.X
			}
			id, ok := typ.(*ast.Ident)
			if !ok {
				t.Fatalf("%s: the receiver of %s is not a named type", path, fd.Name.Name)
			}
			name := strings.TrimPrefix(filepath.Dir(path), root+"/") + "." + id.Name
			if kinds[name] == nil {
				kinds[name] = map[bool][]string{}
			}
			kinds[name][pointer] = append(kinds[name][pointer], fd.Name.Name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(kinds) < 30 {
		t.Fatalf("found methods of only %d types", len(kinds))
	}
	for name, k := range kinds {
		if len(k) > 1 {
			t.Errorf("%s has value receivers on %v and pointer receivers on %v", name, k[false], k[true])
		}
	}
}

// Every package doc says what the package is in a paragraph or two: at most 40 lines. Longer
// explanations go beside the code they explain.
func TestPackageDocsAreShort(t *testing.T) {
	const maxLines = 40
	checked := 0
	for _, top := range []string{"shared", "infra", "functions"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				return err
			}
			if f.Doc == nil {
				return nil
			}
			checked++
			if n := len(f.Doc.List); n > maxLines {
				t.Errorf("%s: the package doc is %d lines; at most %d", path, n, maxLines)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 50 {
		t.Fatalf("found only %d package docs", checked)
	}
}
