// Package backends holds the backend families; this service has tunnel group backends, which
// select online tunnels by label.
package backends

import (
	"context"
	"maps"
	"sort"
	"strings"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// TunnelGroupItem is a stored tunnel group backend.
type TunnelGroupItem struct {
	store.Meta
	resource.Described
	Labels map[string]string `dynamodbav:"labels"`
}

// TunnelGroupJSON is the wire form of a tunnel group backend.
type TunnelGroupJSON struct {
	ID        string `json:"id"`
	URI       string `json:"uri"`
	CreatedAt string `json:"created_at"`
	resource.DescribedJSON
	Labels map[string]string `json:"labels"`
	// Tunnels are the online tunnels matching the labels; this service has no tunnel sessions
	// yet, so it is always an empty list (never null).
	Tunnels []api.Ref `json:"tunnels"`
}

type tunnelGroupBody struct {
	api.Text
	Labels *map[string]string `json:"labels"`
}

var textCodes = api.TextCodes{Description: api.CodeBadFieldValue, Metadata: api.CodeBadFieldValue}

// Limits on labels, so one backend stays a small item.
const (
	MaxLabels     = 64
	MaxLabelBytes = 255
)

// TunnelGroupBackendsDescriptor is the /backends/tunnel_group family.
var TunnelGroupBackendsDescriptor = &resource.Descriptor{
	Path: "/backends/tunnel_group", Prefix: ids.TunnelGroupBackend, ListKey: "backends", EventKind: "tunnel_group_backend",
	Function: "TunnelGroupBackendsFunction", Dir: "tunnel_group_backends",
	Routes: resource.Serve(func(f *resource.Family[TunnelGroupItem, *TunnelGroupItem]) resource.Hooks[*TunnelGroupItem] {
		return TunnelGroupBackends{f}
	}),
}

// TunnelGroupBackends is the tunnel group backend family's rules.
type TunnelGroupBackends struct {
	*resource.Family[TunnelGroupItem, *TunnelGroupItem]
}

// Render returns a tunnel group backend as GET returns it.
func (f TunnelGroupBackends) Render(r *api.Request, it *TunnelGroupItem) any {
	labels := it.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	return TunnelGroupJSON{ID: it.ID, URI: f.URI(r, it.ID), CreatedAt: api.Timestamp(it.CreatedAt), DescribedJSON: it.Described.Rendered(), Labels: labels, Tunnels: []api.Ref{}}
}

// Create fills a new tunnel group backend from the request body.
func (TunnelGroupBackends) Create(ctx context.Context, r *api.Request, it *TunnelGroupItem, m *resource.Mutation) (any, error) {
	var in tunnelGroupBody
	if err := api.Decode(r, &in); err != nil {
		return nil, err
	}
	return nil, it.apply(in)
}

// Update applies a PATCH body; at least one member must be given.
func (TunnelGroupBackends) Update(ctx context.Context, r *api.Request, it *TunnelGroupItem, m *resource.Mutation) error {
	var in tunnelGroupBody
	if err := api.Decode(r, &in); err != nil {
		return err
	}
	if in.Description == nil && in.Metadata == nil && in.Labels == nil {
		return api.EmptyUpdate("description", "metadata", "labels")
	}
	return it.apply(in)
}

func (it *TunnelGroupItem) apply(in tunnelGroupBody) error {
	if err := it.SetText(textCodes, in.Text); err != nil {
		return err
	}
	if in.Labels != nil {
		if err := checkLabels(*in.Labels); err != nil {
			return err
		}
		it.Labels = maps.Clone(*in.Labels)
	}
	return nil
}

// checkLabels validates a labels map: keys and values non-empty, without '='.
func checkLabels(labels map[string]string) error {
	if len(labels) > MaxLabels {
		return api.Invalid("labels", "labels has %d entries; the limit is %d", len(labels), MaxLabels)
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := labels[k]
		switch {
		case k == "":
			return api.Invalid("labels", "a label name must not be empty")
		case v == "":
			return api.Invalid("labels", "label %s has an empty value", api.Describe(k))
		case strings.Contains(k, "="):
			return api.Invalid("labels", "label name %s must not contain '='", api.Describe(k))
		case strings.Contains(v, "="):
			return api.Invalid("labels", "the value of label %s must not contain '='", api.Describe(k))
		case len(k) > MaxLabelBytes || len(v) > MaxLabelBytes:
			return api.Invalid("labels", "label %s is longer than %d bytes", api.Describe(k), MaxLabelBytes)
		}
	}
	return nil
}
