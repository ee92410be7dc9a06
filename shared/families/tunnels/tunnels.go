package tunnels

import (
	"context"

	"tunnelapi/shared/families/endpoints/view"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// TunnelItem is a stored tunnel: one proxy an agent opened on its session.
type TunnelItem struct {
	store.Meta
	SessionID string `dynamodbav:"session"`
	// ProxyName is the proxy's name in the agent's configuration, unique in its session.
	ProxyName string `dynamodbav:"proxy"`
	PublicURL string `dynamodbav:"public_url"`
	Proto     string `dynamodbav:"proto"`
	Region    string `dynamodbav:"region"`
	// Labels are the proxy's metadatas, which tunnel-group backends match.
	Labels   map[string]string `dynamodbav:"labels"`
	Metadata string            `dynamodbav:"metadata"`
	// ForwardsTo is the upstream the agent forwards to, when the tunnel server tells it.
	ForwardsTo string `dynamodbav:"forwards_to"`
	// Generation is the session's generation (SessionItem.Generation) of the connection that
	// opened the proxy, or reopened it after a reconnect (Adopt).
	Generation int64 `dynamodbav:"generation"`
	// EndpointID is the tunnel's ephemeral endpoint (ep_…), written and deleted with it.
	EndpointID string `dynamodbav:"endpoint,omitempty"`
}

// TunnelJSON is the wire form of a tunnel, in the platform's member order.
type TunnelJSON struct {
	ID            string  `json:"id"`
	PublicURL     string  `json:"public_url"`
	StartedAt     string  `json:"started_at"`
	Metadata      string  `json:"metadata,omitempty"`
	Proto         string  `json:"proto"`
	Region        string  `json:"region"`
	TunnelSession api.Ref `json:"tunnel_session"`
	// Endpoint is the tunnel's ephemeral endpoint.
	Endpoint   *api.Ref          `json:"endpoint"`
	Labels     map[string]string `json:"labels"`
	Backends   []api.Ref         `json:"backends"`
	ForwardsTo string            `json:"forwards_to"`
}

// TunnelsDescriptor is the /tunnels family.
var TunnelsDescriptor = &resource.Descriptor{
	Path: "/tunnels", Prefix: ids.Tunnel, ListKey: "tunnels", EventKind: "tunnel",
	Operations: resource.OpList | resource.OpGet,
	Reported:   audit.Created | audit.Deleted,
	Binding:    func() resource.Binding { return resource.Bind(newTunnels) },
}

// Tunnels is the tunnel family's rules.
type Tunnels struct {
	*resource.Family[TunnelItem, *TunnelItem]
}

func newTunnels(f *resource.Family[TunnelItem, *TunnelItem]) Tunnels { return Tunnels{f} }

// Render returns a tunnel as GET returns it.
func (Tunnels) Render(r *api.Request, it *TunnelItem) any { return RenderTunnel(r, it) }

// RenderTunnel is a tunnel's wire form on r's host, for the plugin's events.
func RenderTunnel(r *api.Request, it *TunnelItem) TunnelJSON {
	out := TunnelJSON{ID: it.ID, PublicURL: it.PublicURL, StartedAt: api.Timestamp(it.CreatedAt), Metadata: it.Metadata,
		Proto: it.Proto, Region: it.Region, TunnelSession: *resource.Ref(r, TunnelSessionsDescriptor.Path, it.SessionID),
		Labels: labels(it.Labels), Backends: []api.Ref{}, ForwardsTo: it.ForwardsTo}
	if it.EndpointID != "" {
		out.Endpoint = resource.Ref(r, view.Path, it.EndpointID)
	}
	return out
}

// labels is a tunnel's labels as the wire shows them: an object, empty when it has none.
func labels(l map[string]string) map[string]string {
	if l == nil {
		return map[string]string{}
	}
	return l
}

// Create refuses: see errReported.
func (Tunnels) Create(ctx context.Context, r *api.Request, it *TunnelItem, m *resource.Mutation) (any, error) {
	return nil, errReported
}
