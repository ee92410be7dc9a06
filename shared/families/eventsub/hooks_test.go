package eventsub

import (
	"slices"
	"testing"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/hooktest"
)

// The hooks run without a table: these call them directly with hooktest's request.

func TestSubscriptionRender(t *testing.T) {
	f := resource.HooksOf[EventSubscriptions](EventSubscriptionsDescriptor, nil)
	it := &EventSubscriptionItem{Meta: store.Meta{ID: "esb_1"}, Described: resource.Described{Metadata: "m"},
		Sources: []string{"api_key_created.v0"}, Destinations: []string{"ed_1"}}
	want := `{"id":"esb_1","uri":"https://api.example.com/event_subscriptions/esb_1","created_at":"1970-01-01T00:00:00Z",` +
		`"metadata":"m",` +
		`"sources":[{"type":"api_key_created.v0","uri":"https://api.example.com/event_subscriptions/esb_1/sources/api_key_created.v0"}],` +
		`"destinations":[{"id":"ed_1","uri":"https://api.example.com/event_destinations/ed_1"}]}`
	hooktest.WantJSON(t, f.Render(hooktest.Request(""), it), want)
}

func TestSubscriptionUpdateRefusals(t *testing.T) {
	var f EventSubscriptions
	it := &EventSubscriptionItem{Meta: store.Meta{ID: "esb_1"}, Sources: []string{"api_key_created.v0"}}
	// Each refusal comes before anything is added to the mutation, so none is needed here.
	hooktest.WantCode(t, f.Update(t.Context(), hooktest.Request(`{}`), it, nil), api.CodeEmptyUpdate, "body")
	hooktest.WantCode(t, f.Update(t.Context(), hooktest.Request(`{"sources":[{"type":"nope"}]}`), it, nil), CodeBadType, "sources[0].type")
	hooktest.WantCode(t, f.Update(t.Context(), hooktest.Request(`{"sources":[{"type":"api_key_created.v0"},{"type":"api_key_created.v0"}]}`), it, nil),
		CodeDuplicateSource, "sources[1].type")
	hooktest.WantCode(t, f.Update(t.Context(), hooktest.Request(`{"destination_ids":["esb_1"]}`), it, nil), api.CodeBadFieldValue, "destination_ids[0]")
	if len(it.Sources) != 1 {
		t.Fatalf("refused update changed the sources: %v", it.Sources)
	}
}

func TestSourceEdits(t *testing.T) {
	it := &EventSubscriptionItem{Sources: []string{"a.v0", "b.v0"}}
	hooktest.WantCode(t, it.addSource("a.v0"), CodeDuplicateSource, "type")
	hooktest.WantCode(t, it.removeSource("c.v0"), CodeSourceNotFound, "type")
	if err := it.addSource("c.v0"); err != nil {
		t.Fatal(err)
	}
	if err := it.removeSource("b.v0"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(it.Sources, []string{"a.v0", "c.v0"}) {
		t.Fatalf("sources %v, want [a.v0 c.v0] (order kept)", it.Sources)
	}
}

func TestDestinationHooks(t *testing.T) {
	f := resource.HooksOf[EventDestinations](EventDestinationsDescriptor, nil)
	it := &EventDestinationItem{Meta: store.Meta{ID: "ed_1"}, Format: FormatJSON, Target: Target{Kind: KindKinesis}}
	r, ok := f.Render(hooktest.Request(""), it).(EventDestinationJSON)
	if !ok || r.URI != "https://api.example.com/event_destinations/ed_1" || r.Format != "json" || r.Target.Kinesis == nil {
		t.Fatalf("rendered %+v", r)
	}
	hooktest.WantCode(t, f.Update(t.Context(), hooktest.Request(`{}`), it, nil), api.CodeEmptyUpdate, "body")
	hooktest.WantCode(t, f.Update(t.Context(), hooktest.Request(`{"format":"xml"}`), it, nil), CodeBadFormat, "format")
	hooktest.WantCode(t, f.Update(t.Context(), hooktest.Request(`{"target":{"datadog":{"api_key":"k"}}}`), it, nil), CodeTargetChanged, "target.datadog")
	if in := f.InUse(); in.Code != CodeInUse || in.Field != "id" {
		t.Fatalf("in use refusal %+v", in)
	}
}
