package resource

import (
	"context"
	"testing"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/seal"
)

// openSealer is a Sealer that seals and opens anything.
type openSealer struct{}

func (openSealer) Seal(context.Context, []byte, map[string]string) (seal.Sealed, error) {
	return seal.Sealed{}, nil
}

func (openSealer) Open(context.Context, seal.Sealed, map[string]string) ([]byte, error) {
	return nil, nil
}

// A family's kit seals and opens only what its Binding keeps (Keeping), whatever the kit it is
// registered with can do.
func TestKitKeepsOnlyWhatTheBindingDeclares(t *testing.T) {
	ctx := context.Background()
	for _, keeps := range []Secrets{0, Seals, Opens, Seals | Opens} {
		var served *Family[widget, *widget]
		d := &Descriptor{Path: "/keepers", Prefix: "kp", ListKey: "keepers", EventKind: "keeper", Operations: OpCreate,
			Binding: func() Binding {
				return Bind(func(f *Family[widget, *widget]) notes { served = f; return notes{f} }).Keeping(keeps)
			}}
		d.Register(&Kit{Seal: openSealer{}}, &routeRecorder{}, &api.Server{})
		if d.Secrets() != keeps {
			t.Errorf("Keeping(%d): the descriptor reports %d", keeps, d.Secrets())
		}
		_, sealErr := served.Kit.Seal.Seal(ctx, []byte("x"), nil)
		_, openErr := served.Kit.Seal.Open(ctx, seal.Sealed{}, nil)
		if (sealErr == nil) != (keeps&Seals != 0) || (openErr == nil) != (keeps&Opens != 0) {
			t.Errorf("Keeping(%d): sealing gives %v, opening %v", keeps, sealErr, openErr)
		}
	}
}
