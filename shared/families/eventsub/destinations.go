package eventsub

import (
	"context"
	"net/http"
	"strings"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// EventDestinationItem is a stored event destination. Meta.Refs counts the subscriptions that
// reference it.
type EventDestinationItem struct {
	store.Meta
	resource.Described
	Format string `dynamodbav:"format"`
	Target Target `dynamodbav:"target"`
}

// SealAAD is the additional data a destination's secret is sealed with: it opens only on the
// destination it was stored on.
func SealAAD(account, id string) map[string]string {
	return map[string]string{"account": account, "id": id}
}

// EventDestinationJSON is the wire form of an event destination.
type EventDestinationJSON struct {
	ID string `json:"id"`
	resource.DescribedJSON
	CreatedAt string     `json:"created_at"`
	Format    string     `json:"format"`
	Target    TargetJSON `json:"target"`
	URI       string     `json:"uri"`
}

// FormatJSON is the only event format.
const FormatJSON = "json"

// destinationBody is a create or PATCH body.
type destinationBody struct {
	api.Text
	Format *string     `json:"format"`
	Target *TargetJSON `json:"target"`
}

// errDestinationInUse refuses deleting a destination a subscription still references.
var errDestinationInUse = &api.Error{Status: http.StatusBadRequest, Code: CodeInUse, Field: "id",
	Msg: "the event destination is used by an event subscription; remove it from every subscription first"}

// destinationsPath is the event destinations' collection path, for references to them.
const destinationsPath = "/event_destinations"

// EventDestinationsDescriptor is the /event_destinations family.
var EventDestinationsDescriptor = &resource.Descriptor{
	Path: destinationsPath, Prefix: ids.EventDestination, ListKey: "event_destinations",
	EventKind: "event_destination", Filter: true,
	Reads:   []config.Section{config.DeploymentSettings},
	Binding: func() resource.Binding { return resource.Bind(newEventDestinations).Keeping(resource.Seals) },
}

// EventDestinations is the event destination family's rules. Subscriptions reference
// destinations, so a destination still in use is not deleted.
type EventDestinations struct {
	*resource.Family[EventDestinationItem, *EventDestinationItem]
}

func newEventDestinations(f *resource.Family[EventDestinationItem, *EventDestinationItem]) EventDestinations {
	return EventDestinations{f}
}

// Render returns a destination as GET returns it: its target's secret is never shown.
func (f EventDestinations) Render(r *api.Request, it *EventDestinationItem) any {
	return EventDestinationJSON{ID: it.ID, DescribedJSON: it.Described.Rendered(), CreatedAt: api.Timestamp(it.CreatedAt),
		Format: it.Format, Target: it.Target.JSON(), URI: resource.URI(r, f.Path, it.ID)}
}

// Create fills a new destination from the request body, sealing its target's secret.
func (f EventDestinations) Create(ctx context.Context, r *api.Request, it *EventDestinationItem, m *resource.Mutation) (any, error) {
	var in destinationBody
	if err := it.DecodeCreate(r, textCodes, &in); err != nil {
		return nil, err
	}
	it.Format = FormatJSON
	if err := setFormat(&it.Format, in.Format); err != nil {
		return nil, err
	}
	return nil, f.setTarget(ctx, it, in.Target, nil)
}

// Update applies a PATCH body; at least one member must be given. A target given keeps the
// stored secret unless it supplies a new one.
func (f EventDestinations) Update(ctx context.Context, r *api.Request, it *EventDestinationItem, m *resource.Mutation) error {
	var in destinationBody
	if err := it.DecodePatch(r, textCodes, &in); err != nil {
		return err
	}
	if err := setFormat(&it.Format, in.Format); err != nil {
		return err
	}
	if in.Target == nil {
		return nil
	}
	prev := it.Target
	return f.setTarget(ctx, it, in.Target, &prev)
}

// InUse is the refusal to delete a destination a subscription still references.
func (EventDestinations) InUse() *api.Error { return errDestinationInUse }

// setFormat sets a supplied format, which must be json (in any case).
func setFormat(dst *string, in *string) error {
	if in == nil {
		return nil
	}
	if !strings.EqualFold(*in, FormatJSON) {
		return api.BadRequest(CodeBadFormat, "format", "format %s is not supported; the only format is json", api.Describe(*in))
	}
	*dst = FormatJSON
	return nil
}

// setTarget validates the supplied target and seals its new secret, if any, to the item.
func (f EventDestinations) setTarget(ctx context.Context, it *EventDestinationItem, in *TargetJSON, prev *Target) error {
	deployment := ""
	if f.Kit != nil && f.Kit.Settings.Deployment != nil {
		deployment = f.Kit.Settings.Deployment.AccountID
	}
	t, secret, err := parseTarget(in, prev, deployment)
	if err != nil {
		return err
	}
	if secret != nil {
		s, err := f.Kit.Seal.Seal(ctx, []byte(*secret), SealAAD(it.AccountID, it.ID))
		if err != nil {
			return err
		}
		t.Secret = &s
	}
	it.Target = t
	return nil
}
