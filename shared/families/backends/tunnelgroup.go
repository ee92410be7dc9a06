package backends

import (
	"context"
	"maps"
	"slices"
	"strings"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// TunnelGroupItem is a stored tunnel group backend.
type TunnelGroupItem struct {
	store.Meta
	text
	leaf
	Labels map[string]string `dynamodbav:"labels"`
}

// TunnelGroupJSON is the wire form of a tunnel group backend.
type TunnelGroupJSON struct {
	resource.Head
	Labels map[string]string `json:"labels"`
	// Tunnels are the online tunnels matching the labels; this service has no tunnel sessions
	// yet, so it is always an empty list (never null).
	Tunnels []api.Ref `json:"tunnels"`
}

type tunnelGroupBody struct {
	api.Text
	Labels *map[string]string `json:"labels"`
}

// Limits on labels, so one backend stays a small item.
const (
	MaxLabels     = 64
	MaxLabelBytes = 255
)

// TunnelGroupBackendsDescriptor is the /backends/tunnel_group family.
var TunnelGroupBackendsDescriptor = &resource.Descriptor{
	Path: "/backends/tunnel_group", Prefix: ids.TunnelGroupBackend, ListKey: "backends", EventKind: "tunnel_group_backend",
	Binding: func() resource.Binding {
		return resource.Bind(newBackends[TunnelGroupItem, *TunnelGroupItem, tunnelGroupBody])
	},
}

// TunnelGroupBackends is the tunnel group backend family's rules.
type TunnelGroupBackends = Backends[TunnelGroupItem, *TunnelGroupItem, tunnelGroupBody]

func (it *TunnelGroupItem) wire(r *api.Request, h resource.Head) any {
	return TunnelGroupJSON{Head: h, Labels: api.Map(it.Labels), Tunnels: []api.Ref{}}
}

func (it *TunnelGroupItem) apply(ctx context.Context, k *resource.Kit, r *api.Request, in *tunnelGroupBody, m *resource.Mutation, create bool) error {
	if in.Labels == nil {
		return nil
	}
	if err := checkLabels(*in.Labels); err != nil {
		return err
	}
	it.Labels = maps.Clone(*in.Labels)
	return nil
}

// checkLabels validates a labels map: at most MaxLabels, names and values of 1 to MaxLabelBytes
// bytes, without '='.
func checkLabels(labels map[string]string) error {
	if len(labels) > MaxLabels {
		return api.BadRequest(CodeTooManyLabels, "labels", "labels has %d entries; the limit is %d", len(labels), MaxLabels)
	}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		v := labels[k]
		switch {
		case k == "" || len(k) > MaxLabelBytes:
			return api.BadRequest(CodeLabelName, "labels", "label name %s is %d bytes long; it must be 1 to %d bytes", api.Describe(k), len(k), MaxLabelBytes)
		case v == "" || len(v) > MaxLabelBytes:
			return api.BadRequest(CodeLabelValue, "labels", "the value of label %s is %d bytes long; it must be 1 to %d bytes", api.Describe(k), len(v), MaxLabelBytes)
		case strings.Contains(k, "="):
			return api.BadRequest(CodeLabelEquals, "labels", "label name %s must not contain '='", api.Describe(k))
		case strings.Contains(v, "="):
			return api.BadRequest(CodeLabelEquals, "labels", "the value of label %s must not contain '='", api.Describe(k))
		}
	}
	return nil
}
