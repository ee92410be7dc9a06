package kmsseal

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"tunnelapi/shared/platform/seal"
)

// Each constructor makes its own sealer through seal.New, and a sealer made for one direction
// refuses the other without calling KMS: the client here is nil, so a call would panic.
func TestRegisteredSealersRefuseWhatTheyLeaveOut(t *testing.T) {
	ctx := context.Background()
	aad := seal.ResourceContext("ac_1", "x_1")
	cfg := aws.Config{Region: "us-east-1"}
	settings := seal.Settings{KMSKeyID: "alias/test"}

	settings.NewKMS = New
	if _, ok := seal.New(cfg, settings).(*KMS); !ok {
		t.Errorf("with New, seal.New returns %T, want *KMS", seal.New(cfg, settings))
	}

	settings.NewKMS = NewSealing
	s, ok := seal.New(cfg, settings).(*sealing)
	if !ok {
		t.Fatalf("with NewSealing, seal.New returns %T, want *sealing", seal.New(cfg, settings))
	}
	s.Client = nil
	if _, err := s.Open(ctx, seal.Sealed{WrappedKey: []byte("k")}, aad); !errors.Is(err, errSealOnly) {
		t.Errorf("a sealing sealer's Open: %v, want %v", err, errSealOnly)
	}

	settings.NewKMS = NewOpening
	o, ok := seal.New(cfg, settings).(*opening)
	if !ok {
		t.Fatalf("with NewOpening, seal.New returns %T, want *opening", seal.New(cfg, settings))
	}
	o.Client = nil
	if _, err := o.Seal(ctx, []byte("secret"), aad); !errors.Is(err, errOpenOnly) {
		t.Errorf("an opening sealer's Seal: %v, want %v", err, errOpenOnly)
	}
}
