package testkit

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/testing/samples"
)

// SampleMakers make the samples' set-ups (samples.Setup) in a's account: the resources to
// create, as a, and the tunnel session to report (AgentSession).
func SampleMakers(t testing.TB, a *Account) samples.Makers {
	return samples.Makers{
		Create: func(_ context.Context, path string, body any) (map[string]any, error) {
			return a.Do(t, "POST", path, body).Expect(t, http.StatusCreated), nil
		},
		Report: func(context.Context) (map[string]string, error) {
			session, tunnel := AgentSession(t, a.s, a)
			url, _ := a.Do(t, "GET", "/tunnels/"+tunnel, nil).Expect(t, http.StatusOK)["public_url"].(string)
			return map[string]string{"session_id": session, "tunnel_id": tunnel, "public_url": url}, nil
		},
	}
}

// ReadSample reads the sample event file with the placeholders of vars filled.
func ReadSample(t testing.TB, file string, vars map[string]string) events.APIGatewayV2HTTPRequest {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal([]byte(app.FillSample(string(raw), vars)), &ev); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return ev
}

// FirstSample is function folder dir's first sample event under the checkout at root, filled
// for account a (what it names created first): the file, the placeholders' values and the
// event.
func FirstSample(t testing.TB, root, dir string, a *Account) (string, map[string]string, events.APIGatewayV2HTTPRequest) {
	t.Helper()
	files, err := app.SampleFiles(root, dir)
	if err != nil {
		t.Fatal(err)
	}
	vars, err := samples.Setup(t.Context(), root, dir, SampleMakers(t, a))
	if err != nil {
		t.Fatal(err)
	}
	vars[app.TokenPlaceholder] = a.Token
	return files[0], vars, ReadSample(t, files[0], vars)
}

// SampleForm is a family's create and update bodies, taken from its sample events.
type SampleForm struct {
	Family         *resource.Descriptor
	Path           string // the collection path
	Create, Update map[string]any
	// Modules are the bodies of the item's module PUTs (<path>/{id}/<module>), by module.
	Modules map[string]map[string]any
}

// SampleForms returns the create and update bodies of every family's sample events
// (events/<dir>/ under the checkout at root), with their setups made in a's account; it fails
// the test if a family of app.Families has none (no update body for a family that serves no
// update).
func SampleForms(t testing.TB, root string, a *Account) []SampleForm {
	t.Helper()
	var out []SampleForm
	for _, f := range app.Functions() {
		files, err := app.SampleFiles(root, f.Dir)
		if err != nil {
			t.Fatal(err)
		}
		vars, err := samples.Setup(t.Context(), root, f.Dir, SampleMakers(t, a))
		if err != nil {
			t.Fatal(err)
		}
		forms := map[string]*SampleForm{}
		for _, file := range files {
			ev := ReadSample(t, file, vars)
			method, path, _ := strings.Cut(ev.RouteKey, " ")
			var body map[string]any
			if ev.Body != "" {
				if err := json.Unmarshal([]byte(ev.Body), &body); err != nil {
					t.Fatalf("%s: body: %v", file, err)
				}
			}
			coll := strings.TrimSuffix(path, "/{id}")
			if base, module, ok := strings.Cut(path, "/{id}/"); ok && method == "PUT" && forms[base] != nil && !strings.Contains(module, "/") {
				if forms[base].Modules == nil {
					forms[base].Modules = map[string]map[string]any{}
				}
				forms[base].Modules[module] = body
			}
			if strings.Contains(coll, "{") {
				continue // a sub-resource
			}
			if forms[coll] == nil {
				forms[coll] = &SampleForm{Path: coll}
			}
			switch {
			case method == "POST" && path == coll:
				forms[coll].Create = body
			case method == "PATCH" && path != coll:
				forms[coll].Update = body
			}
		}
		for _, d := range f.Families {
			if !d.Offers(resource.OpCreate) {
				continue // reported, never created through the API (tunnel sessions and tunnels)
			}
			form := forms[d.Path]
			if form == nil || form.Create == nil || (form.Update == nil) == d.Offers(resource.OpUpdate) {
				t.Fatalf("events/%s has no create sample for %s, or an update sample exactly when the family serves no update", f.Dir, d.Path)
			}
			form.Family = d
			out = append(out, *form)
		}
	}
	return out
}

// CloudEndpointMembers are the members the platform returns for every cloud endpoint, besides
// description and metadata when set, domain when the URL's host is on a reserved domain (every
// public http, https and tls endpoint's is) and tcp_addr when it is a reserved address.
var CloudEndpointMembers = []string{"id", "uri", "created_at", "updated_at", "type", "url", "public_url", "proto",
	"hostport", "bindings", "pooling_enabled", "traffic_policy"}
