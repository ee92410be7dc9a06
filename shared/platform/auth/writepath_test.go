package auth_test

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// callbacks returns what in the package files lets authentication call back into its writer:
// an import of package resource (or of a family), and an exported function, method or struct
// field of an exported type whose type takes or is a func (as Commit(build) once did).
func callbacks(files []*ast.File) []string {
	funcTypes := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok {
				for _, s := range g.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						if _, ok := ts.Type.(*ast.FuncType); ok {
							funcTypes[ts.Name.Name] = true
						}
					}
				}
			}
		}
	}
	isFunc := func(e ast.Expr) bool {
		for {
			switch t := e.(type) {
			case *ast.StarExpr:
				e = t.X
			case *ast.Ellipsis:
				e = t.Elt
			case *ast.FuncType:
				return true
			case *ast.Ident:
				return funcTypes[t.Name]
			default:
				return false
			}
		}
	}
	var out []string
	for _, f := range files {
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "tunnelapi/shared/platform/resource") || strings.HasPrefix(path, "tunnelapi/shared/families") {
				out = append(out, "imports "+path)
			}
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || (d.Recv != nil && !exportedReceiver(d.Recv.List[0].Type)) {
					continue
				}
				for _, p := range d.Type.Params.List {
					if isFunc(p.Type) {
						out = append(out, d.Name.Name+" takes a func")
					}
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok || !ts.Name.IsExported() {
						continue
					}
					if st, ok := ts.Type.(*ast.StructType); ok {
						for _, fld := range st.Fields.List {
							if isFunc(fld.Type) && (len(fld.Names) == 0 || fld.Names[0].IsExported()) {
								out = append(out, ts.Name.Name+" has a func field")
							}
						}
					}
				}
			}
		}
	}
	return out
}

func exportedReceiver(e ast.Expr) bool {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	id, ok := e.(*ast.Ident)
	return ok && id.IsExported()
}

// A writer's call graph from its handler to TransactWriteItems has no callback from
// authentication into it: package auth does not import package resource, and nothing it exports
// takes a func to call (Refresh, Guard and Committed are called by the writer in turn).
func TestAuthCallsNothingBackInItsWriter(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := gotoken.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) < 2 {
		t.Fatalf("parsed %d files of package auth, want its sources", len(files))
	}
	for _, c := range callbacks(files) {
		t.Errorf("package auth %s: a writer's path would go back and forth", c)
	}
}

// The check finds the shape the write path had: Commit taking the writer's build callback.
func TestCallbackCheckFindsCommitWithBuild(t *testing.T) {
	const old = `package auth
import "tunnelapi/shared/platform/store"
type Authenticator struct{ DB *store.DB }
type build func(tx *store.Tx) error
func (a *Authenticator) Commit(r *api.Request, build func(tx *store.Tx) (*expression.UpdateBuilder, error)) error { return nil }
func (a *Authenticator) CommitAll(r *api.Request, builds ...build) error { return nil }
func (a *Authenticator) commit(build func()) {}
type Hooks struct{ Build build }
`
	f, err := parser.ParseFile(gotoken.NewFileSet(), "old.go", old, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := callbacks([]*ast.File{f})
	want := []string{"Commit takes a func", "CommitAll takes a func", "Hooks has a func field"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("callbacks of the old shape = %q, want %q", got, want)
	}
}
