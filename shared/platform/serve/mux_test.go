package serve

import (
	"strings"
	"testing"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/api"
)

// Deps.Mux gives the ServeMux one pattern per path and picks the route by method, which answers
// as a pattern per route only while no request path matches two of the families' paths: this
// holds every path of every family (the local server serves them all in one mux) to it.
func TestFamilyPathsDoNotOverlap(t *testing.T) {
	routes := &byPath{}
	for _, f := range app.Families {
		f.Register(nil, routes, &api.Server{})
	}
	if len(routes.paths) < 50 {
		t.Fatalf("%d paths: the families registered too few", len(routes.paths))
	}
	segments := func(p string) []string {
		if !strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "...}") {
			t.Fatalf("path %q: only /a/{b}/c shapes are checked here", p)
		}
		return strings.Split(p[1:], "/")
	}
	wildcard := func(s string) bool { return strings.HasPrefix(s, "{") }
	for i, p := range routes.paths {
		for _, q := range routes.paths[i+1:] {
			sp, sq := segments(p), segments(q)
			if len(sp) != len(sq) {
				continue
			}
			overlap := true
			for k := range sp {
				if !wildcard(sp[k]) && !wildcard(sq[k]) && sp[k] != sq[k] {
					overlap = false
				}
			}
			if overlap {
				t.Errorf("a request path matches both %s (%d methods) and %s (%d methods)", p, len(routes.methods[p]), q, len(routes.methods[q]))
			}
		}
	}
}

// A family route without a method, or one registered twice, stops the function at start.
func TestByPathRefusesWhatItCannotServe(t *testing.T) {
	for _, patterns := range [][]string{{"/x"}, {"GET /x", "GET /x"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%q did not panic", patterns)
				}
			}()
			b := &byPath{}
			for _, p := range patterns {
				b.Handle(p, nil)
			}
		}()
	}
}
