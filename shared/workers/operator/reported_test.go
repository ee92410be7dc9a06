package operator

import "testing"

// An export leaves out a live tunnel's ephemeral endpoint, which no create makes, and keeps the
// cloud endpoints beside it in the same list.
func TestExportLeavesReportedObjects(t *testing.T) {
	cases := []struct {
		path string
		obj  map[string]any
		want bool
	}{
		{"/endpoints", map[string]any{"id": "ep_1", "type": "ephemeral"}, true},
		{"/endpoints", map[string]any{"id": "ep_2", "type": "cloud"}, false},
		{"/api_keys", map[string]any{"id": "ak_1", "type": "ephemeral"}, false},
	}
	for _, c := range cases {
		if got := isReported(c.path, c.obj); got != c.want {
			t.Errorf("isReported(%s, %v) = %v, want %v", c.path, c.obj, got, c.want)
		}
	}
}
