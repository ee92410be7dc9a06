package edges

import (
	"context"
	"encoding/json"
	"testing"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/testing/hooktest"
)

// TestParseHostport: "hostname:portnumber" (7104) with a port in 1-65535 (7112), normalised.
func TestParseHostport(t *testing.T) {
	for in, want := range map[string]string{
		"App.Example.COM:443": "app.example.com:443", "a.example.com:0443": "a.example.com:443",
		"*.example.com:443": "*.example.com:443", "tcp.us.example.com:65535": "tcp.us.example.com:65535",
	} {
		host, port, err := parseHostport("hostports[0]", in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := host + ":" + itoa(port); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	var cases []hooktest.Refusal
	for in, code := range map[string]string{
		"": CodeHostportFormat, ":443": CodeHostportFormat, "example.com": CodeHostportFormat, "example.com:": CodeHostportFormat,
		"example.com:-1": CodeHostportFormat, "example.com:+1": CodeHostportFormat, "exa mple.com:443": CodeHostportFormat,
		"[::1]:443": CodeHostportFormat, "example.com:443:443": CodeHostportFormat, "example.com:0": CodePortRange,
		"example.com:65536": CodePortRange, "example.com:99999999999999999999": CodePortRange, "example.com:00000": CodePortRange,
	} {
		cases = append(cases, hooktest.Case(in, code, "hostports[0]", func() error {
			_, _, err := parseHostport("hostports[0]", in)
			return err
		}))
	}
	hooktest.Refusals(t, cases)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestSetParse: members named like a module are checked as one (null: not supplied), any other
// name is 214, and Apply replaces only what was supplied, then runs the set's rules.
func TestSetParse(t *testing.T) {
	ctx := context.Background()
	backend := ids.New("bkdtg")
	supplied := func(body string) Supplied {
		var in struct {
			Modules Supplied `json:",embed"`
		}
		if err := api.DecodeBytes([]byte(body), &in); err != nil {
			t.Fatal(err)
		}
		return in.Modules
	}
	it := &TLSEdgeItem{TrafficPolicy: &TrafficPolicy{Value: ptr("kept")}}
	c, err := tlsModules.Parse(ctx, supplied(`{"backend":{"backend_id":"`+backend+`"},"mutual_tls":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Apply(it); err != nil {
		t.Fatal(err)
	}
	if it.Backend == nil || it.Backend.BackendID != backend || !it.Backend.Enabled || it.MutualTLS != nil || *it.TrafficPolicy.Value != "kept" {
		t.Fatalf("after Apply: %+v", it)
	}
	hooktest.Refusals(t, []hooktest.Refusal{
		hooktest.Case("unknown module", api.CodeUnknownField, "routes", func() error {
			_, err := tlsModules.Parse(ctx, supplied(`{"routes":[]}`))
			return err
		}),
		hooktest.Case("module member of the wrong type", api.CodeBadFieldValue, "backend.backend_id", func() error {
			_, err := tlsModules.Parse(ctx, supplied(`{"backend":{"backend_id":7}}`))
			return err
		}),
		hooktest.Case("upstream with mutual TLS", CodeUpstream, "mutual_tls", func() error {
			c, err := tlsModules.Parse(ctx, supplied(`{"tls_termination":{"terminate_at":"upstream"},"mutual_tls":{}}`))
			if err != nil {
				return err
			}
			return c.Apply(&TLSEdgeItem{})
		}),
	})
	// Module responses: refs with URIs, null when absent.
	hooktest.WantJSON(t, tlsBackend.Render(hooktest.Request(""), it),
		`{"enabled":true,"backend":{"id":"`+backend+`","uri":"https://api.example.com/backends/tunnel_group/`+backend+`"}}`)
	hooktest.WantJSON(t, tlsMutualTLS.Render(hooktest.Request(""), it), `null`)
}

func ptr[T any](v T) *T { return &v }
