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
	// Tunnels are the live tunnels whose labels include every one of the backend's, in id
	// order; an empty list (never null) when none does, and in what a mutation answers and
	// records (resource.Joiner).
	Tunnels []api.Ref `json:"tunnels"`
}

// TunnelGroupBody is the body of a tunnel group backend's create and update.
type TunnelGroupBody struct {
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
		return resource.Bind(newTunnelGroupBackends)
	},
}

// TunnelGroupBackends is the tunnel group backend family's rules: a backend kind's, and its
// get and list join the account's live tunnels (resource.Joiner).
type TunnelGroupBackends struct {
	Backends[TunnelGroupItem, *TunnelGroupItem, TunnelGroupBody]
}

func newTunnelGroupBackends(f *resource.Family[TunnelGroupItem, *TunnelGroupItem]) TunnelGroupBackends {
	return TunnelGroupBackends{newBackends[TunnelGroupItem, *TunnelGroupItem, TunnelGroupBody](f)}
}

// tunnelsPath is the path of the tunnels family (package tunnels), whose items the backend
// lists by their labels.
const tunnelsPath = "/tunnels"

// Joined reads the account's tunnels: their ids and labels.
func (TunnelGroupBackends) Joined() (string, []string) { return ids.Tunnel, []string{"id", "labels"} }

// RenderJoined is the backend as get and list answer it: with the tunnels among joined whose
// labels match.
func (f TunnelGroupBackends) RenderJoined(r *api.Request, it *TunnelGroupItem, joined []store.Item) any {
	out := f.Render(r, it).(TunnelGroupJSON)
	for _, raw := range joined {
		var t struct {
			ID     string            `dynamodbav:"id"`
			Labels map[string]string `dynamodbav:"labels"`
		}
		if store.Unmarshal(raw, &t) != nil || !matches(it.Labels, t.Labels) {
			continue
		}
		out.Tunnels = append(out.Tunnels, api.Ref{ID: t.ID, URI: r.URI(tunnelsPath + "/" + t.ID)})
	}
	return out
}

// matches reports whether a tunnel's labels include every one of a backend's selector; a
// backend without labels selects nothing.
func matches(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if l, ok := labels[k]; !ok || l != v {
			return false
		}
	}
	return true
}

func (it *TunnelGroupItem) wire(r *api.Request, h resource.Head) any {
	return TunnelGroupJSON{Head: h, Labels: api.Map(it.Labels), Tunnels: []api.Ref{}}
}

func (it *TunnelGroupItem) apply(ctx context.Context, k *resource.Kit, r *api.Request, in *TunnelGroupBody, m *resource.Mutation, create bool) error {
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
