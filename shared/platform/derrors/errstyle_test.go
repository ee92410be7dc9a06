package derrors_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// root is the checkout, from this package.
const root = "../../.."

// Errors are wrapped one way (the derrors package doc): a function names its operation in a
// deferred derrors.Wrap, so no fmt.Errorf with %w outside derrors starts with its package's name
// ("store: …", "store.Commit: …").
func TestErrorsAreWrappedOneWay(t *testing.T) {
	for _, dir := range []string{"shared", "functions", "infra"} {
		filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if filepath.Base(filepath.Dir(rel)) == "derrors" {
				return nil
			}
			fset := token.NewFileSet()
			f, perr := parser.ParseFile(fset, path, nil, 0)
			if perr != nil {
				t.Fatal(perr)
			}
			pkg := f.Name.Name
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Errorf" {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); !ok || id.Name != "fmt" {
					return true
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				format, _ := strconv.Unquote(lit.Value)
				if strings.Contains(format, "%w") && (strings.HasPrefix(format, pkg+": ") || strings.HasPrefix(format, pkg+".")) {
					t.Errorf("%s: fmt.Errorf(%q) names its package in place: name the operation with a deferred derrors.Wrap at the function's top", fset.Position(call.Pos()), format)
				}
				return true
			})
			return nil
		})
	}
}
