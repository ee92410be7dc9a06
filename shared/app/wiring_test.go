package app_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/api"
)

// recorder is an api.Mux that keeps the patterns registered on it.
type recorder struct{ routes []string }

func (r *recorder) Handle(pattern string, _ http.Handler) { r.routes = append(r.routes, pattern) }

// Registering a family adds exactly the routes its descriptor declares: the operations it
// serves and the routes of its Binding, nothing more or less.
func TestRegisterAddsTheDeclaredRoutes(t *testing.T) {
	for _, d := range app.Families {
		rec := &recorder{}
		d.Register(nil, rec, &api.Server{})
		declared := d.Routes()
		if len(declared) == 0 || !slices.Equal(rec.routes, declared) {
			t.Errorf("%s: registered %v, declared %v", d.Path, rec.routes, declared)
		}
	}
}

// wiring lists, for each place allowed to touch a mux, what it may use: the api package defines
// the Mux and Server.Handle, resource's Register is the one place routes are added, and the
// process wiring creates the mux. Everything else declares its routes as data
// (resource.Bind, resource.Route).
var wiring = map[string][]string{
	"shared/platform/api":               {"api.Mux", "api.Server", ".Handle(", "http.HandlerFunc"},
	"shared/platform/resource/serve.go": {"api.Mux", "api.Server", ".Handle("},
	"shared/platform/serve":             {"api.Server", "http.NewServeMux", ".Handle("},
	// The operator's interface is no family: its routes are IAM-authorized, not a tenant's.
	"shared/workers/operator/serve.go": {"api.Mux", "api.Server", "http.NewServeMux", ".Handle("},
	// Nor is the tunnel servers' plugin: its callers are frps nodes, authorized by their keys.
	"shared/workers/frpplugin/plugin.go": {"api.Mux", "api.Server", "http.NewServeMux", ".Handle("},
	// Test support: a plane of frps, frpc and the plugin on a server of its own.
	"shared/testing/frptest/plane.go": {"http.NewServeMux", ".Handle("},
}

// No code outside the wiring places above registers a route or holds what registering one
// needs: a family that hand-wired a route (an api.Mux parameter, a mux.Handle call, an
// api.Server's Handle, a ServeMux of its own) fails here.
func TestNoRouteIsHandWired(t *testing.T) {
	files := 0
	for _, top := range []string{"shared", "functions"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			var allowed []string
			for place, uses := range wiring {
				if rel == place || strings.HasPrefix(rel, place+"/") {
					allowed = uses
				}
			}
			files++
			for _, use := range wiringUses(t, path) {
				if !slices.Contains(allowed, use.what) {
					t.Errorf("%s:%d uses %s: declare the route in the family's resource.Bind instead", rel, use.line, use.what)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 100 {
		t.Fatalf("checked only %d files", files)
	}
}

type wiringUse struct {
	what string
	line int
}

// wiringUses returns what the Go file at path uses to register routes: api.Mux and api.Server,
// net/http's muxes and handler registration, and calls of a method named Handle or HandleFunc
// with a pattern (a string) first.
func wiringUses(t *testing.T, path string) []wiringUse {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{} // local import name → "api" or "http"
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		short := map[string]string{"net/http": "http", "tunnelapi/shared/platform/api": "api"}[p]
		if short == "" {
			continue
		}
		local := short
		if imp.Name != nil {
			local = imp.Name.Name
		}
		names[local] = short
	}
	watched := map[string]bool{"api.Mux": true, "api.Server": true, "http.NewServeMux": true, "http.ServeMux": true,
		"http.Handle": true, "http.HandleFunc": true}
	var out []wiringUse
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && names[x.Name] != "" {
				if what := names[x.Name] + "." + n.Sel.Name; watched[what] {
					out = append(out, wiringUse{what, fset.Position(n.Pos()).Line})
				}
			}
		case *ast.CallExpr:
			sel, ok := n.Fun.(*ast.SelectorExpr)
			if ok && (sel.Sel.Name == "Handle" || sel.Sel.Name == "HandleFunc") && len(n.Args) == 2 && stringy(n.Args[0]) {
				out = append(out, wiringUse{".Handle(", fset.Position(n.Pos()).Line})
			}
		}
		return true
	})
	return out
}

// stringy reports whether e is a string literal or a concatenation starting with one, as a mux
// pattern is written.
func stringy(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Kind == token.STRING
	case *ast.BinaryExpr:
		return e.Op == token.ADD && (stringy(e.X) || stringy(e.Y))
	}
	return false
}
