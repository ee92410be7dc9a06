package backends_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"tunnelapi/shared/families/backends"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/hooktest"
)

// meta is the stored identity the rendered samples share.
func meta(id string) store.Meta {
	return store.Meta{ID: id, CreatedAt: 60}
}

// The hooks run without a table: members in wire order (description and metadata omitted when
// empty), empty maps and lists as {} and [] (never null), and an empty PATCH refused.
func TestBackendHooks(t *testing.T) {
	r := hooktest.Request("")
	const head = `"uri":"https://api.example.com/backends/`
	tg := backends.TunnelGroupBackends{Backends: backends.Backends[backends.TunnelGroupItem, *backends.TunnelGroupItem, backends.TunnelGroupBody]{
		Family: &resource.Family[backends.TunnelGroupItem, *backends.TunnelGroupItem]{Descriptor: backends.TunnelGroupBackendsDescriptor}}}
	it := &backends.TunnelGroupItem{Meta: meta("bkdtg_1")}
	it.Description = "d"
	hooktest.WantJSON(t, tg.Render(r, it), `{"id":"bkdtg_1",`+head+`tunnel_group/bkdtg_1","created_at":"1970-01-01T00:01:00Z","description":"d","labels":{},"tunnels":[]}`)
	hooktest.WantCode(t, tg.Update(t.Context(), hooktest.Request(`{}`), it, nil), api.CodeEmptyUpdate, "body")
	// Joined with the account's tunnels, it lists those whose labels include all of its own.
	tunnel := func(id string, labels map[string]string) store.Item {
		item, err := attributevalue.MarshalMap(map[string]any{"id": id, "labels": labels})
		if err != nil {
			t.Fatal(err)
		}
		return item
	}
	joined := []store.Item{tunnel("tn_1", map[string]string{"app": "web", "dc": "x"}), tunnel("tn_2", map[string]string{"app": "db"}),
		tunnel("tn_3", nil), tunnel("tn_4", map[string]string{"app": "web"})}
	it.Labels = map[string]string{"app": "web"}
	hooktest.WantJSON(t, tg.RenderJoined(r, it, joined), `{"id":"bkdtg_1",`+head+`tunnel_group/bkdtg_1","created_at":"1970-01-01T00:01:00Z","description":"d","labels":{"app":"web"},`+
		`"tunnels":[{"id":"tn_1","uri":"https://api.example.com/tunnels/tn_1"},{"id":"tn_4","uri":"https://api.example.com/tunnels/tn_4"}]}`)
	it.Labels = nil
	hooktest.WantJSON(t, tg.RenderJoined(r, it, joined), `{"id":"bkdtg_1",`+head+`tunnel_group/bkdtg_1","created_at":"1970-01-01T00:01:00Z","description":"d","labels":{},"tunnels":[]}`)

	st := backends.StaticBackends{Family: &resource.Family[backends.StaticItem, *backends.StaticItem]{Descriptor: backends.StaticBackendsDescriptor}}
	hooktest.WantJSON(t, st.Render(r, &backends.StaticItem{Meta: meta("bkdsc_1"), Address: "a:1"}),
		`{"id":"bkdsc_1",`+head+`static/bkdsc_1","created_at":"1970-01-01T00:01:00Z","address":"a:1","tls":{"enabled":false}}`)
	hooktest.WantCode(t, st.Update(t.Context(), hooktest.Request(`{}`), &backends.StaticItem{}, nil), api.CodeEmptyUpdate, "body")

	hr := backends.HTTPResponseBackends{Family: &resource.Family[backends.HTTPResponseItem, *backends.HTTPResponseItem]{Descriptor: backends.HTTPResponseBackendsDescriptor}}
	hooktest.WantJSON(t, hr.Render(r, &backends.HTTPResponseItem{Meta: meta("bkdhr_1"), StatusCode: 200}),
		`{"id":"bkdhr_1",`+head+`http_response/bkdhr_1","created_at":"1970-01-01T00:01:00Z","body":"","headers":{},"status_code":200}`)

	fo := backends.FailoverBackends{Family: &resource.Family[backends.FailoverItem, *backends.FailoverItem]{Descriptor: backends.FailoverBackendsDescriptor}}
	hooktest.WantJSON(t, fo.Render(r, &backends.FailoverItem{Meta: meta("bkdfo_1")}),
		`{"id":"bkdfo_1",`+head+`failover/bkdfo_1","created_at":"1970-01-01T00:01:00Z","backends":[]}`)

	wd := backends.WeightedBackends{Family: &resource.Family[backends.WeightedItem, *backends.WeightedItem]{Descriptor: backends.WeightedBackendsDescriptor}}
	hooktest.WantJSON(t, wd.Render(r, &backends.WeightedItem{Meta: meta("bkdwd_1"), Weights: map[string]int64{"bkdtg_1": 5}}),
		`{"id":"bkdwd_1",`+head+`weighted/bkdwd_1","created_at":"1970-01-01T00:01:00Z","backends":{"bkdtg_1":5}}`)
	hooktest.WantCode(t, wd.Update(t.Context(), hooktest.Request(`{"backends":{"bkdtg_1":10001}}`), &backends.WeightedItem{}, nil), backends.CodeWeight, "backends.bkdtg_1")
}
