package endpoints

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
)

func hooks() Endpoints {
	return Endpoints{&resource.Family[Item, *Item]{Descriptor: EndpointsDescriptor}}
}

// TestEndpointRender renders an item without a table: the URL's parts and exactly the members
// the platform returns for a cloud endpoint, in wire order; metadata, empty, is omitted.
func TestEndpointRender(t *testing.T) {
	it := &Item{URL: "tcp://db.internal:5432", Type: TypeCloud, TrafficPolicy: "{}", Bindings: []string{BindingInternal},
		PrincipalID: ids.New(ids.BotUser), UpdatedAt: 60}
	it.ID, it.Description = "ep_1", "d"
	got, err := json.Marshal(hooks().Render(&api.Request{HTTP: httptest.NewRequest("GET", "https://api.example.com/", nil)}, it))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"ep_1","uri":"https://api.example.com/endpoints/ep_1","created_at":"1970-01-01T00:00:00Z",` +
		`"updated_at":"1970-01-01T00:01:00Z","description":"d","type":"cloud","url":"tcp://db.internal:5432",` +
		`"public_url":"tcp://db.internal:5432","proto":"tcp","hostport":"db.internal:5432","bindings":["internal"],` +
		`"pooling_enabled":false,"traffic_policy":"{}"}`
	if string(got) != want {
		t.Fatalf("render\n got %s\nwant %s", got, want)
	}
}

// TestEndpointHooksRefuse checks the validation of Create, Update and Delete without a table:
// each bad request gets its code and field before any write is added.
func TestEndpointHooksRefuse(t *testing.T) {
	f := hooks()
	req := func(body string) *api.Request {
		return &api.Request{HTTP: httptest.NewRequest("POST", "https://api.example.com/", nil), Body: []byte(body)}
	}
	cloud := func() *Item {
		return &Item{URL: "https://a.example.com", Type: TypeCloud, Bindings: []string{BindingPublic}}
	}
	agent := &Item{URL: "https://a.example.com", Type: "agent"}
	for _, c := range []struct {
		name, code, field string
		run               func() error
	}{
		{"create of another type", CodeCloudOnly, "type", func() error {
			_, err := f.Create(t.Context(), req(`{"type":"edge"}`), &Item{}, nil)
			return err
		}},
		{"create without url", CodeInvalidURL, "url", func() error {
			_, err := f.Create(t.Context(), req(`{}`), &Item{}, nil)
			return err
		}},
		{"update of an agent endpoint", CodeCloudOnly, "id", func() error { return f.Update(t.Context(), req(`{}`), agent, nil) }},
		{"empty update", api.CodeEmptyUpdate, "body", func() error { return f.Update(t.Context(), req(`{}`), cloud(), nil) }},
		{"update to a bad url", CodeInvalidURL, "url", func() error {
			return f.Update(t.Context(), req(`{"url":"ftp://a.example.com"}`), cloud(), nil)
		}},
		{"update with two bindings", api.CodeBadFieldValue, "bindings", func() error {
			return f.Update(t.Context(), req(`{"bindings":["public","kubernetes"]}`), cloud(), nil)
		}},
		{"delete of an agent endpoint", CodeCloudOnly, "id", func() error { return f.Delete(t.Context(), req(""), agent, nil) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var e *api.Error
			if err := c.run(); !errors.As(err, &e) || e.Code != c.code || e.Field != c.field {
				t.Fatalf("got %v, want %s on %s", err, c.code, c.field)
			}
		})
	}
}
