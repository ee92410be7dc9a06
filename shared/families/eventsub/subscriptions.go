package eventsub

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// textCodes: these families have no codes of their own for over-long text.
var textCodes = api.TextCodes{Description: api.CodeBadFieldValue, Metadata: api.CodeBadFieldValue}

// Codes of the event subscription family, and its limit on destinations.
const (
	CodeBadType          = "ERR_NGROK_238"
	CodeNoSubscription   = "ERR_NGROK_5123"
	CodeSourceNotFound   = "ERR_NGROK_5125"
	CodeDuplicateSource  = "ERR_NGROK_5127"
	MaxSubscriptionDests = 20
)

// EventSubscriptionItem is a stored event subscription: the event types it matches (its sources, in
// the order they were added) and the destinations those events go to.
type EventSubscriptionItem struct {
	store.Meta
	resource.Described
	Sources      []string `dynamodbav:"sources"`
	Destinations []string `dynamodbav:"dests"`
}

// Attribute names the event worker projects when it matches events against subscriptions.
const (
	AttrSources      = "sources"
	AttrDestinations = "dests"
)

// EventSubscriptionJSON is the wire form of an event subscription.
type EventSubscriptionJSON struct {
	resource.Head
	Sources      []SourceJSON `json:"sources"`
	Destinations []api.Ref    `json:"destinations"`
}

// SourceJSON is the wire form of an event source: one event type of a subscription.
type SourceJSON struct {
	Type string `json:"type"`
	URI  string `json:"uri"`
}

type sourceIn struct {
	Type *string `json:"type"`
}

// subscriptionBody is a create or PATCH body.
type subscriptionBody struct {
	api.Text
	Sources        *[]sourceIn `json:"sources"`
	DestinationIDs *[]string   `json:"destination_ids"`
}

// EventSubscriptionsDescriptor is the /event_subscriptions family with its sources
// sub-resource.
var EventSubscriptionsDescriptor = &resource.Descriptor{
	Path: "/event_subscriptions", Prefix: ids.EventSubscription, ListKey: "event_subscriptions",
	EventKind: "event_subscription", Filter: true,
	Binding: func() resource.Binding { return resource.Bind(newEventSubscriptions, sourceRoutes...) },
}

// sourceRoutes serve /event_subscriptions/{subscription_id}/sources: the subscription's event
// types as a sub-resource keyed by type, kept inside the subscription item (read with
// Family.Load, changed with Family.Modify, so each change is the subscription's update).
var sourceRoutes = []resource.Route[EventSubscriptions]{
	{Method: http.MethodPost, Pattern: "/{subscription_id}/sources", Status: http.StatusCreated, Handle: EventSubscriptions.createSource},
	{Method: http.MethodGet, Pattern: "/{subscription_id}/sources", Status: http.StatusOK, Handle: EventSubscriptions.listSources},
	{Method: http.MethodGet, Pattern: "/{subscription_id}/sources/{type}", Status: http.StatusOK, Handle: EventSubscriptions.getSource},
	{Method: http.MethodPatch, Pattern: "/{subscription_id}/sources/{type}", Status: http.StatusOK, Handle: EventSubscriptions.updateSource},
	{Method: http.MethodDelete, Pattern: "/{subscription_id}/sources/{type}", Status: http.StatusNoContent, Handle: EventSubscriptions.deleteSource},
}

// EventSubscriptions is the event subscription family's rules. A subscription references each
// of its destinations, in the subscription's own transaction.
type EventSubscriptions struct {
	*resource.Family[EventSubscriptionItem, *EventSubscriptionItem]
}

func newEventSubscriptions(f *resource.Family[EventSubscriptionItem, *EventSubscriptionItem]) EventSubscriptions {
	return EventSubscriptions{f}
}

// Render returns a subscription as GET returns it.
func (f EventSubscriptions) Render(r *api.Request, it *EventSubscriptionItem) any {
	out := EventSubscriptionJSON{Head: resource.NewHead(r, f.Path, &it.Meta, it.Described), Sources: f.renderSources(r, it),
		Destinations: make([]api.Ref, 0, len(it.Destinations))}
	for _, d := range it.Destinations {
		out.Destinations = append(out.Destinations, api.Ref{ID: d, URI: resource.URI(r, destinationsPath, d)})
	}
	return out
}

// Create fills a new subscription from the request body.
func (EventSubscriptions) Create(ctx context.Context, r *api.Request, it *EventSubscriptionItem, m *resource.Mutation) (any, error) {
	var in subscriptionBody
	if err := it.DecodeCreate(r, textCodes, &in); err != nil {
		return nil, err
	}
	it.Sources, it.Destinations = []string{}, []string{}
	if err := it.setSources(in.Sources); err != nil {
		return nil, err
	}
	return nil, it.setDestinations(m, in.DestinationIDs)
}

// Update applies a PATCH body; at least one member must be given. Sources and destinations
// given replace the stored lists.
func (EventSubscriptions) Update(ctx context.Context, r *api.Request, it *EventSubscriptionItem, m *resource.Mutation) error {
	var in subscriptionBody
	if err := it.DecodePatch(r, textCodes, &in); err != nil {
		return err
	}
	if err := it.setSources(in.Sources); err != nil {
		return err
	}
	return it.setDestinations(m, in.DestinationIDs)
}

// Delete drops the subscription's references to its destinations.
func (EventSubscriptions) Delete(ctx context.Context, r *api.Request, it *EventSubscriptionItem, m *resource.Mutation) error {
	for _, d := range it.Destinations {
		m.Reference(d, -1, nil)
	}
	return nil
}

func (f EventSubscriptions) renderSources(r *api.Request, it *EventSubscriptionItem) []SourceJSON {
	out := make([]SourceJSON, 0, len(it.Sources))
	for _, t := range it.Sources {
		out = append(out, f.source(r, it.ID, t))
	}
	return out
}

// source is the wire form of the source typ of subscription sub.
func (f EventSubscriptions) source(r *api.Request, sub, typ string) SourceJSON {
	return SourceJSON{Type: typ, URI: resource.URI(r, f.Path, sub+"/sources/"+url.PathEscape(typ))}
}

// setSources replaces the sources with a supplied list.
func (it *EventSubscriptionItem) setSources(in *[]sourceIn) error {
	if in == nil {
		return nil
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(*in))
	for i, s := range *in {
		field := "sources[" + strconv.Itoa(i) + "].type"
		if s.Type == nil || !KnownType(*s.Type) {
			return badType(field, s.Type)
		}
		if seen[*s.Type] {
			return api.BadRequest(CodeDuplicateSource, field, "event type %s is listed twice", *s.Type)
		}
		seen[*s.Type] = true
		out = append(out, *s.Type)
	}
	it.Sources = out
	return nil
}

func badType(field string, t *string) error {
	v := ""
	if t != nil {
		v = *t
	}
	return api.BadRequest(CodeBadType, field, "%s is not an event type (for example api_key_created.v0)", api.Describe(v))
}

// setDestinations replaces the destinations with a supplied list: each added destination gets
// a reference (which also proves it exists in this account) and each dropped one loses it, in
// the subscription's own transaction.
func (it *EventSubscriptionItem) setDestinations(m *resource.Mutation, in *[]string) error {
	if in == nil {
		return nil
	}
	if len(*in) > MaxSubscriptionDests {
		return api.Invalid("destination_ids", "a subscription may have at most %d destinations", MaxSubscriptionDests)
	}
	seen := map[string]bool{}
	for i, id := range *in {
		field := "destination_ids[" + strconv.Itoa(i) + "]"
		if !ids.Is(id, ids.EventDestination) {
			return api.Invalid(field, "%s %s is not an event destination id (ed_…)", field, api.Describe(id))
		}
		if seen[id] {
			return api.Invalid(field, "event destination %s is listed twice", id)
		}
		seen[id] = true
	}
	for i, id := range *in {
		if !slices.Contains(it.Destinations, id) {
			m.Reference(id, 1, api.Invalid("destination_ids["+strconv.Itoa(i)+"]", "event destination %s does not exist in this account", id))
		}
	}
	for _, id := range it.Destinations {
		if !seen[id] {
			m.Reference(id, -1, nil)
		}
	}
	it.Destinations = append([]string{}, *in...)
	return nil
}

// errNoSubscription is the sources sub-resource's answer for an absent subscription.
var errNoSubscription = &api.Error{Status: http.StatusNotFound, Code: CodeNoSubscription, Field: "subscription_id",
	Msg: "Resource not found: no such event subscription"}

func errNoSource(typ string) error {
	return &api.Error{Status: http.StatusNotFound, Code: CodeSourceNotFound, Field: "type",
		Msg: "Resource not found: event type " + api.Describe(typ) + " is not a source of this subscription"}
}

// sourceCreate is the body of a source POST; the path's subscription_id, when repeated in
// the body, is checked and dropped by api.Decode.
type sourceCreate struct {
	Type *string `json:"type"`
}

// sourceList is the not-paginated list of a subscription's sources.
type sourceList struct {
	Sources []SourceJSON `json:"sources"`
	URI     string       `json:"uri"`
}

// noQuery refuses any query parameter: the sources list is not paginated.
func noQuery(r *api.Request) error {
	for k := range r.HTTP.URL.Query() {
		return api.BadRequest(api.CodeUnknownParam, k, "unknown query parameter %s", api.Describe(k))
	}
	return nil
}

func (f EventSubscriptions) createSource(ctx context.Context, r *api.Request) (any, error) {
	var in sourceCreate
	if err := api.Decode(r, &in); err != nil {
		return nil, err
	}
	if in.Type == nil || !KnownType(*in.Type) {
		return nil, badType("type", in.Type)
	}
	it, err := f.Modify(ctx, r, r.PathValue("subscription_id"), errNoSubscription, func(it *EventSubscriptionItem, m *resource.Mutation) error {
		return it.addSource(*in.Type)
	})
	if err != nil {
		return nil, err
	}
	return f.source(r, it.ID, *in.Type), nil
}

func (f EventSubscriptions) listSources(ctx context.Context, r *api.Request) (any, error) {
	if err := noQuery(r); err != nil {
		return nil, err
	}
	it, err := f.Load(ctx, r, r.PathValue("subscription_id"), errNoSubscription)
	if err != nil {
		return nil, err
	}
	return sourceList{Sources: f.renderSources(r, it), URI: resource.URI(r, f.Path, it.ID+"/sources")}, nil
}

func (f EventSubscriptions) getSource(ctx context.Context, r *api.Request) (any, error) {
	typ := r.PathValue("type")
	it, err := f.Load(ctx, r, r.PathValue("subscription_id"), errNoSubscription)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(it.Sources, typ) {
		return nil, errNoSource(typ)
	}
	return f.source(r, it.ID, typ), nil
}

// updateSource answers with the source as it is: a source has no changeable member, and its update
// form holds only the path's values, which api.Decode checks and drops. Like every PATCH, it
// still commits (and records) an update.
func (f EventSubscriptions) updateSource(ctx context.Context, r *api.Request) (any, error) {
	if err := api.Decode(r, &struct{}{}); err != nil {
		return nil, err
	}
	typ := r.PathValue("type")
	it, err := f.Modify(ctx, r, r.PathValue("subscription_id"), errNoSubscription, func(it *EventSubscriptionItem, m *resource.Mutation) error {
		if !slices.Contains(it.Sources, typ) {
			return errNoSource(typ)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return f.source(r, it.ID, typ), nil
}

func (f EventSubscriptions) deleteSource(ctx context.Context, r *api.Request) (any, error) {
	typ := r.PathValue("type")
	_, err := f.Modify(ctx, r, r.PathValue("subscription_id"), errNoSubscription, func(it *EventSubscriptionItem, m *resource.Mutation) error {
		return it.removeSource(typ)
	})
	return nil, err
}

// addSource appends the event type typ to the sources.
func (it *EventSubscriptionItem) addSource(typ string) error {
	if slices.Contains(it.Sources, typ) {
		return api.BadRequest(CodeDuplicateSource, "type", "event type %s is already a source of this subscription", typ)
	}
	it.Sources = append(it.Sources, typ)
	return nil
}

// removeSource deletes the source typ.
func (it *EventSubscriptionItem) removeSource(typ string) error {
	i := slices.Index(it.Sources, typ)
	if i < 0 {
		return errNoSource(typ)
	}
	it.Sources = slices.Delete(it.Sources, i, i+1)
	return nil
}
