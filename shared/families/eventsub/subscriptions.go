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

// resourceText is what both event families share: their item's Meta, description and metadata.
type resourceText struct {
	store.Meta
	Description string `dynamodbav:"description"`
	Metadata    string `dynamodbav:"metadata"`
}

// textCodes: these families have no codes of their own for over-long text.
var textCodes = api.TextCodes{Description: api.CodeBadFieldValue, Metadata: api.CodeBadFieldValue}

func (t *resourceText) setText(description, metadata *string) error {
	if err := api.CheckText(textCodes, description, metadata); err != nil {
		return err
	}
	api.Set(&t.Description, description)
	api.Set(&t.Metadata, metadata)
	return nil
}

// Codes of the event subscription family (WIRE.md, "Errors").
const (
	CodeBadType          = "ERR_NGROK_238"
	CodeNoSubscription   = "ERR_NGROK_5123"
	CodeSourceNotFound   = "ERR_NGROK_5125"
	CodeDuplicateSource  = "ERR_NGROK_5127"
	MaxSubscriptionDests = 20
)

// SubscriptionItem is a stored event subscription: the event types it matches (its sources, in
// the order they were added) and the destinations those events go to.
type SubscriptionItem struct {
	resourceText
	Sources      []string `dynamodbav:"sources"`
	Destinations []string `dynamodbav:"dests"`
}

// Attribute names the event worker projects when it matches events against subscriptions.
const (
	AttrSources      = "sources"
	AttrDestinations = "dests"
)

// SubscriptionJSON is the wire form of an event subscription.
type SubscriptionJSON struct {
	ID           string       `json:"id"`
	URI          string       `json:"uri"`
	CreatedAt    string       `json:"created_at"`
	Metadata     string       `json:"metadata"`
	Description  string       `json:"description"`
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

type subscriptionCreate struct {
	Description    *string     `json:"description"`
	Metadata       *string     `json:"metadata"`
	Sources        *[]sourceIn `json:"sources"`
	DestinationIDs *[]string   `json:"destination_ids"`
}

type subscriptionUpdate struct {
	Description    *string     `json:"description"`
	Metadata       *string     `json:"metadata"`
	Sources        *[]sourceIn `json:"sources"`
	DestinationIDs *[]string   `json:"destination_ids"`
}

const subscriptionsPath = "/event_subscriptions"

// Subscriptions returns the /event_subscriptions family.
func Subscriptions(k *resource.Kit) *resource.Family[SubscriptionItem, *SubscriptionItem] {
	f := &resource.Family[SubscriptionItem, *SubscriptionItem]{
		Kit: k, Prefix: ids.EventSubscription, Path: subscriptionsPath, ListKey: "event_subscriptions",
		EventKind: "event_subscription", Filter: true,
	}
	f.Render = func(r *api.Request, it *SubscriptionItem) any {
		out := SubscriptionJSON{ID: it.ID, URI: f.URI(r, it.ID), CreatedAt: api.Timestamp(it.CreatedAt),
			Metadata: it.Metadata, Description: it.Description, Sources: renderSources(r, it),
			Destinations: make([]api.Ref, 0, len(it.Destinations))}
		for _, d := range it.Destinations {
			out.Destinations = append(out.Destinations, api.Ref{ID: d, URI: r.URI("/event_destinations/" + d)})
		}
		return out
	}
	f.Create = func(ctx context.Context, r *api.Request, it *SubscriptionItem, m *resource.Mutation) (any, error) {
		var in subscriptionCreate
		if err := api.Decode(r, &in); err != nil {
			return nil, err
		}
		if err := it.setText(in.Description, in.Metadata); err != nil {
			return nil, err
		}
		it.Sources, it.Destinations = []string{}, []string{}
		if err := it.setSources(in.Sources); err != nil {
			return nil, err
		}
		return nil, it.setDestinations(m, in.DestinationIDs)
	}
	f.Update = func(ctx context.Context, r *api.Request, it *SubscriptionItem, m *resource.Mutation) error {
		var in subscriptionUpdate
		if err := api.Decode(r, &in); err != nil {
			return err
		}
		if in.Description == nil && in.Metadata == nil && in.Sources == nil && in.DestinationIDs == nil {
			return api.EmptyUpdate("description", "metadata", "sources", "destination_ids")
		}
		if err := it.setText(in.Description, in.Metadata); err != nil {
			return err
		}
		if err := it.setSources(in.Sources); err != nil {
			return err
		}
		return it.setDestinations(m, in.DestinationIDs)
	}
	f.Delete = func(ctx context.Context, r *api.Request, it *SubscriptionItem, m *resource.Mutation) error {
		for _, d := range it.Destinations {
			m.Reference(d, -1, nil)
		}
		return nil
	}
	return f
}

func renderSources(r *api.Request, it *SubscriptionItem) []SourceJSON {
	out := make([]SourceJSON, 0, len(it.Sources))
	for _, t := range it.Sources {
		out = append(out, SourceJSON{Type: t, URI: sourceURI(r, it.ID, t)})
	}
	return out
}

func sourceURI(r *api.Request, sub, typ string) string {
	return r.URI(subscriptionsPath + "/" + sub + "/sources/" + url.PathEscape(typ))
}

// setSources replaces the sources with a supplied list.
func (it *SubscriptionItem) setSources(in *[]sourceIn) error {
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
func (it *SubscriptionItem) setDestinations(m *resource.Mutation, in *[]string) error {
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

// registerSources adds /event_subscriptions/{subscription_id}/sources: the subscription's
// event types as a sub-resource keyed by type, kept inside the subscription item.
func registerSources(f *resource.Family[SubscriptionItem, *SubscriptionItem], mux api.Mux, s *api.Server) {
	coll := subscriptionsPath + "/{subscription_id}/sources"
	one := coll + "/{type}"
	noQuery := func(r *api.Request) error {
		for k := range r.HTTP.URL.Query() {
			return api.BadRequest(api.CodeUnknownParam, k, "unknown query parameter %s", api.Describe(k))
		}
		return nil
	}
	mux.Handle("POST "+coll, s.Handle(http.StatusCreated, func(ctx context.Context, r *api.Request) (any, error) {
		var in sourceCreate
		if err := api.Decode(r, &in); err != nil {
			return nil, err
		}
		if in.Type == nil || !KnownType(*in.Type) {
			return nil, badType("type", in.Type)
		}
		it, err := f.Modify(ctx, r, r.PathValue("subscription_id"), errNoSubscription, func(it *SubscriptionItem, m *resource.Mutation) error {
			if slices.Contains(it.Sources, *in.Type) {
				return api.BadRequest(CodeDuplicateSource, "type", "event type %s is already a source of this subscription", *in.Type)
			}
			it.Sources = append(it.Sources, *in.Type)
			return nil
		})
		if err != nil {
			return nil, err
		}
		return SourceJSON{Type: *in.Type, URI: sourceURI(r, it.ID, *in.Type)}, nil
	}))
	mux.Handle("GET "+coll, s.Handle(http.StatusOK, func(ctx context.Context, r *api.Request) (any, error) {
		if err := noQuery(r); err != nil {
			return nil, err
		}
		it, err := f.Load(ctx, r, r.PathValue("subscription_id"), errNoSubscription)
		if err != nil {
			return nil, err
		}
		return sourceList{Sources: renderSources(r, it), URI: r.URI(subscriptionsPath + "/" + it.ID + "/sources")}, nil
	}))
	mux.Handle("GET "+one, s.Handle(http.StatusOK, func(ctx context.Context, r *api.Request) (any, error) {
		typ := r.PathValue("type")
		it, err := f.Load(ctx, r, r.PathValue("subscription_id"), errNoSubscription)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(it.Sources, typ) {
			return nil, errNoSource(typ)
		}
		return SourceJSON{Type: typ, URI: sourceURI(r, it.ID, typ)}, nil
	}))
	// A source has no changeable member: its update form holds only the path's values, which
	// api.Decode checks and drops, so a PATCH answers with the source as it is. Like every
	// PATCH, it still commits (and records) an update.
	mux.Handle("PATCH "+one, s.Handle(http.StatusOK, func(ctx context.Context, r *api.Request) (any, error) {
		if err := api.Decode(r, &struct{}{}); err != nil {
			return nil, err
		}
		typ := r.PathValue("type")
		it, err := f.Modify(ctx, r, r.PathValue("subscription_id"), errNoSubscription, func(it *SubscriptionItem, m *resource.Mutation) error {
			if !slices.Contains(it.Sources, typ) {
				return errNoSource(typ)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return SourceJSON{Type: typ, URI: sourceURI(r, it.ID, typ)}, nil
	}))
	mux.Handle("DELETE "+one, s.Handle(http.StatusNoContent, func(ctx context.Context, r *api.Request) (any, error) {
		typ := r.PathValue("type")
		_, err := f.Modify(ctx, r, r.PathValue("subscription_id"), errNoSubscription, func(it *SubscriptionItem, m *resource.Mutation) error {
			i := slices.Index(it.Sources, typ)
			if i < 0 {
				return errNoSource(typ)
			}
			it.Sources = slices.Delete(it.Sources, i, i+1)
			return nil
		})
		return nil, err
	}))
}

// RegisterEventSubscriptions adds the /event_subscriptions routes and their sources.
func RegisterEventSubscriptions(k *resource.Kit, mux api.Mux, s *api.Server) {
	f := Subscriptions(k)
	f.Register(mux, s)
	registerSources(f, mux, s)
}
