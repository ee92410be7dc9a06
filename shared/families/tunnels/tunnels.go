package tunnels

import (
	"context"

	"tunnelapi/shared/families/tunnels/lease"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
)

// TunnelsDescriptor is the /tunnels family.
var TunnelsDescriptor = &resource.Descriptor{
	Path: lease.TunnelsPath, Prefix: ids.Tunnel, ListKey: "tunnels", EventKind: lease.TunnelKind,
	Operations: resource.OpList | resource.OpGet,
	Reported:   audit.Created | audit.Deleted,
	Binding:    func() resource.Binding { return resource.Bind(newTunnels) },
}

// Tunnels is the tunnel family's rules.
type Tunnels struct {
	*resource.Family[lease.TunnelItem, *lease.TunnelItem]
}

func newTunnels(f *resource.Family[lease.TunnelItem, *lease.TunnelItem]) Tunnels { return Tunnels{f} }

// Render returns a tunnel as GET returns it.
func (Tunnels) Render(r *api.Request, it *lease.TunnelItem) any { return lease.RenderTunnel(r, it) }

// Create refuses: see errReported.
func (Tunnels) Create(ctx context.Context, r *api.Request, it *lease.TunnelItem, m *resource.Mutation) (any, error) {
	return nil, errReported
}
