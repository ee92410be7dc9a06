package endpoints

import (
	"testing"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/hooktest"
)

func hooks() Endpoints {
	return resource.HooksOf[Endpoints](EndpointsDescriptor, nil)
}

// TestEndpointRender renders an item without a table: the URL's parts and exactly the members
// the platform returns for a cloud endpoint, in wire order; metadata, empty, is omitted.
func TestEndpointRender(t *testing.T) {
	it := &EndpointItem{URL: "tcp://db.internal:5432", Type: TypeCloud, TrafficPolicy: "{}", Bindings: []string{BindingInternal},
		PrincipalID: ids.New(ids.BotUser), UpdatedAt: 60}
	it.ID, it.Description = "ep_1", "d"
	want := `{"id":"ep_1","uri":"https://api.example.com/endpoints/ep_1","created_at":"1970-01-01T00:00:00Z",` +
		`"updated_at":"1970-01-01T00:01:00Z","description":"d","type":"cloud","url":"tcp://db.internal:5432",` +
		`"public_url":"tcp://db.internal:5432","proto":"tcp","hostport":"db.internal:5432","bindings":["internal"],` +
		`"pooling_enabled":false,"traffic_policy":"{}"}`
	hooktest.WantJSON(t, hooks().Render(hooktest.Request(""), it), want)
}

// TestEndpointHooksRefuse checks the validation of Create, Update and Delete without a table:
// each bad request gets its code and field before any write is added.
func TestEndpointHooksRefuse(t *testing.T) {
	f := hooks()
	cloud := func() *EndpointItem {
		return &EndpointItem{URL: "https://a.example.com", Type: TypeCloud, Bindings: []string{BindingPublic}}
	}
	agent := &EndpointItem{URL: "https://a.example.com", Type: "agent"}
	// toPublic makes a kubernetes endpoint on url public in a mutation of its own, which knows
	// no reservation: the URL is on none.
	toPublic := func(url string) error {
		it := &EndpointItem{URL: url, Type: TypeCloud, Bindings: []string{BindingKubernetes}}
		return f.Update(t.Context(), hooktest.Request(`{"bindings":["public"]}`), it, &resource.Mutation{Tx: &store.Tx{}})
	}
	hooktest.Refusals(t, []hooktest.Refusal{
		hooktest.Case("create of another type", CodeCloudOnly, "type", func() error {
			_, err := f.Create(t.Context(), hooktest.Request(`{"type":"edge"}`), &EndpointItem{}, nil)
			return err
		}),
		hooktest.Case("create without url", CodeInvalidURL, "url", func() error {
			_, err := f.Create(t.Context(), hooktest.Request(`{}`), &EndpointItem{}, nil)
			return err
		}),
		hooktest.Case("update of an agent endpoint", CodeCloudOnly, "id", func() error { return f.Update(t.Context(), hooktest.Request(`{}`), agent, nil) }),
		hooktest.Case("empty update", api.CodeEmptyUpdate, "body", func() error { return f.Update(t.Context(), hooktest.Request(`{}`), cloud(), nil) }),
		hooktest.Case("update to a bad url", CodeInvalidURL, "url", func() error {
			return f.Update(t.Context(), hooktest.Request(`{"url":"ftp://a.example.com"}`), cloud(), nil)
		}),
		hooktest.Case("update with two bindings", api.CodeBadFieldValue, "bindings", func() error {
			return f.Update(t.Context(), hooktest.Request(`{"bindings":["public","kubernetes"]}`), cloud(), nil)
		}),
		hooktest.Case("update of a kubernetes tcp endpoint to public, on no reserved address", CodeAddrNotReserved, "bindings", func() error {
			return toPublic("tcp://db.example.com:5432")
		}),
		hooktest.Case("update of a kubernetes https endpoint to public, on no reserved domain", CodeHostNotReserved, "bindings", func() error {
			return toPublic("https://app.example.com")
		}),
		hooktest.Case("update of a kubernetes wildcard endpoint to public, on no reserved domain", CodeWildcardNotReserved, "bindings", func() error {
			return toPublic("tls://*.example.com")
		}),
		hooktest.Case("update of a kubernetes http endpoint off port 80 to public", CodeInvalidURL, "bindings", func() error {
			return toPublic("http://app.example.com:8080")
		}),
		hooktest.Case("delete of an agent endpoint", CodeCloudOnly, "id", func() error { return f.Delete(t.Context(), hooktest.Request(""), agent, nil) }),
	})
}
