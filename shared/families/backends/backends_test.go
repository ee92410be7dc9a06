package backends_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"tunnelapi/shared/families/backends"
	"tunnelapi/shared/testing/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestTunnelGroupBackendsConformance(t *testing.T) {
	s := testkit.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: backends.TunnelGroupBackendsDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			return map[string]any{"description": "web", "labels": map[string]string{"app": "web"}}
		},
		Update:      map[string]any{"labels": map[string]string{"app": "api", "dc": "eu"}},
		UpdateWants: map[string]any{"labels": map[string]any{"app": "api", "dc": "eu"}, "description": "web", "tunnels": []any{}},
		// Get and list join the account's live tunnels (resource.Joiner): one more Query, issued
		// concurrently with their own calls.
		RoundTrips: map[string]map[string]int{"get": {"BatchGetItem": 1, "Query": 1}, "list": {"BatchGetItem": 1, "Query": 2}},
	})
}

func TestTunnelGroupLabels(t *testing.T) {
	_, a := testkit.AppAccount(t)
	b := a.Do(t, "POST", "/backends/tunnel_group", map[string]any{}).Expect(t, http.StatusCreated)
	if labels, ok := b["labels"].(map[string]any); !ok || len(labels) != 0 {
		t.Fatalf("labels %v, want {}", b["labels"])
	}
	if tunnels, ok := b["tunnels"].([]any); !ok || len(tunnels) != 0 {
		t.Fatalf("tunnels %v, want []", b["tunnels"])
	}
	path := "/backends/tunnel_group/" + b["id"].(string)
	a.Do(t, "PATCH", path, map[string]any{"labels": map[string]string{"app": "web"}}).Expect(t, 200)
	a.Do(t, "PATCH", path, map[string]any{"labels": manyLabels(backends.MaxLabels)}).Expect(t, 200)
	a.Do(t, "PATCH", path, map[string]any{"labels": map[string]string{"app": "web"}}).Expect(t, 200)
	cases := []struct {
		name   string
		labels map[string]any
		field  string
		code   string
	}{
		{"empty key", map[string]any{"": "x"}, "labels", "ERR_NGROK_6509"},
		{"long key", map[string]any{strings.Repeat("k", backends.MaxLabelBytes+1): "x"}, "labels", "ERR_NGROK_6509"},
		{"empty value", map[string]any{"app": ""}, "labels", "ERR_NGROK_6510"},
		{"long value", map[string]any{"app": strings.Repeat("v", backends.MaxLabelBytes+1)}, "labels", "ERR_NGROK_6510"},
		{"equals in key", map[string]any{"a=b": "x"}, "labels", "ERR_NGROK_6531"},
		{"equals in value", map[string]any{"app": "a=b"}, "labels", "ERR_NGROK_6531"},
		{"too many", manyLabels(backends.MaxLabels + 1), "labels", "ERR_NGROK_6508"},
		{"not a string", map[string]any{"app": 1}, "labels.app", "ERR_NGROK_215"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a.Do(t, "POST", "/backends/tunnel_group", map[string]any{"labels": c.labels}).ExpectError(t, 400, c.code, c.field)
			a.Do(t, "PATCH", path, map[string]any{"labels": c.labels}).ExpectError(t, 400, c.code, c.field)
		})
	}
	got, _ := a.WalkPages(t, "/backends/tunnel_group", "backends")
	if len(got) != 1 {
		t.Fatalf("%d backends stored, want 1", len(got))
	}
	if l := a.Do(t, "GET", path, nil).Expect(t, 200)["labels"].(map[string]any); len(l) != 1 || l["app"] != "web" {
		t.Fatalf("labels changed by refused input: %v", l)
	}
}

func manyLabels(n int) map[string]any {
	out := map[string]any{}
	for i := range n {
		out[fmt.Sprintf("k%d", i)] = "v"
	}
	return out
}
