package testkit

import "testing"

// WantMember fails the test unless got has member with the value want (JSON null for nil).
func WantMember(t testing.TB, what string, got map[string]any, member string, want any) {
	t.Helper()
	v, ok := got[member]
	if !ok {
		t.Errorf("%s has no member %s: %v", what, member, got)
	} else if !jsonSame(v, want) {
		t.Errorf("%s: %s = %v, want %v", what, member, v, want)
	}
}

// jsonSame compares a decoded member with a Go literal as JSON carries both.
func jsonSame(got, want any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case string:
		return got == w
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, v := range w {
			if !jsonSame(g[k], v) {
				return false
			}
		}
		return true
	}
	return false
}
