package eventsub

import (
	"context"
	"net/http"
	"strings"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"

	// Secrets of this family are sealed with KMS in AWS.
	_ "tunnelapi/shared/platform/seal/kmsseal"
)

// DestinationItem is a stored event destination. Meta.Refs counts the subscriptions that
// reference it.
type DestinationItem struct {
	resourceText
	Format string `dynamodbav:"format"`
	Target Target `dynamodbav:"target"`
}

// SealAAD is the additional data a destination's secret is sealed with: it opens only on the
// destination it was stored on.
func SealAAD(account, id string) map[string]string {
	return map[string]string{"account": account, "id": id}
}

// DestinationJSON is the wire form of an event destination.
type DestinationJSON struct {
	ID          string     `json:"id"`
	Metadata    string     `json:"metadata"`
	CreatedAt   string     `json:"created_at"`
	Description string     `json:"description"`
	Format      string     `json:"format"`
	Target      TargetJSON `json:"target"`
	URI         string     `json:"uri"`
}

// FormatJSON is the only event format.
const FormatJSON = "json"

type destinationCreate struct {
	Description *string   `json:"description"`
	Metadata    *string   `json:"metadata"`
	Format      *string   `json:"format"`
	Target      *targetIn `json:"target"`
}

type destinationUpdate struct {
	Description *string   `json:"description"`
	Metadata    *string   `json:"metadata"`
	Format      *string   `json:"format"`
	Target      *targetIn `json:"target"`
}

// errDestinationInUse refuses deleting a destination a subscription still references.
var errDestinationInUse = &api.Error{Status: http.StatusBadRequest, Code: CodeInUse, Field: "id",
	Msg: "the event destination is used by an event subscription; remove it from every subscription first"}

// Destinations returns the /event_destinations family.
func Destinations(k *resource.Kit) *resource.Family[DestinationItem, *DestinationItem] {
	f := &resource.Family[DestinationItem, *DestinationItem]{
		Kit: k, Prefix: ids.EventDestination, Path: "/event_destinations", ListKey: "event_destinations",
		EventKind: "event_destination", InUse: errDestinationInUse, Filter: true,
	}
	f.Render = func(r *api.Request, it *DestinationItem) any {
		return DestinationJSON{ID: it.ID, Metadata: it.Metadata, CreatedAt: api.Timestamp(it.CreatedAt),
			Description: it.Description, Format: it.Format, Target: it.Target.JSON(), URI: f.URI(r, it.ID)}
	}
	f.Create = func(ctx context.Context, r *api.Request, it *DestinationItem, m *resource.Mutation) (any, error) {
		var in destinationCreate
		if err := api.Decode(r, &in); err != nil {
			return nil, err
		}
		if err := it.setText(in.Description, in.Metadata); err != nil {
			return nil, err
		}
		it.Format = FormatJSON
		if err := setFormat(&it.Format, in.Format); err != nil {
			return nil, err
		}
		return nil, setTarget(ctx, k, it, in.Target, nil)
	}
	f.Update = func(ctx context.Context, r *api.Request, it *DestinationItem, m *resource.Mutation) error {
		var in destinationUpdate
		if err := api.Decode(r, &in); err != nil {
			return err
		}
		if in.Description == nil && in.Metadata == nil && in.Format == nil && in.Target == nil {
			return api.EmptyUpdate("description", "metadata", "format", "target")
		}
		if err := it.setText(in.Description, in.Metadata); err != nil {
			return err
		}
		if err := setFormat(&it.Format, in.Format); err != nil {
			return err
		}
		if in.Target == nil {
			return nil
		}
		prev := it.Target
		return setTarget(ctx, k, it, in.Target, &prev)
	}
	return f
}

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
func setTarget(ctx context.Context, k *resource.Kit, it *DestinationItem, in *targetIn, prev *Target) error {
	t, secret, err := parseTarget(in, prev)
	if err != nil {
		return err
	}
	if secret != nil {
		s, err := k.Seal.Seal(ctx, []byte(*secret), SealAAD(it.AccountID, it.ID))
		if err != nil {
			return err
		}
		t.Secret = &s
	}
	it.Target = t
	return nil
}

// RegisterEventDestinations adds the /event_destinations routes.
func RegisterEventDestinations(k *resource.Kit, mux api.Mux, s *api.Server) {
	Destinations(k).Register(mux, s)
}
