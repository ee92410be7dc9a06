package backends_test

import (
	"testing"

	"tunnelapi/shared/families/backends"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/testing/hooktest"
)

// TestTunnelGroupHooks runs the hooks without a table: members in wire order (metadata omitted when empty), labels {} and
// tunnels [] when there are none, and bad bodies refused naming the member.
func TestTunnelGroupHooks(t *testing.T) {
	f := backends.TunnelGroupBackends{Family: &resource.Family[backends.TunnelGroupItem, *backends.TunnelGroupItem]{Descriptor: backends.TunnelGroupBackendsDescriptor}}
	it := &backends.TunnelGroupItem{}
	it.ID, it.CreatedAt, it.Description = "bkdtg_1", 60, "d"
	hooktest.WantJSON(t, f.Render(hooktest.Request(""), it),
		`{"id":"bkdtg_1","uri":"https://api.example.com/backends/tunnel_group/bkdtg_1","created_at":"1970-01-01T00:01:00Z",`+
			`"description":"d","labels":{},"tunnels":[]}`)
	hooktest.WantCode(t, f.Update(t.Context(), hooktest.Request(`{}`), it, nil), api.CodeEmptyUpdate, "body")
}
