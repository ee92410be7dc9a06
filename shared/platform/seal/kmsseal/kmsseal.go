// Package kmsseal links the KMS client into the functions that seal or open secrets, with only
// the KMS operations each uses. A function passes the constructor it needs (New, NewSealing or
// NewOpening) as seal.Settings.NewKMS, so a function that keeps no secrets does not link the
// client at all, one that only seals does not link its Decrypt and one that only opens does not
// link its GenerateDataKey.
package kmsseal

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"tunnelapi/shared/platform/seal"
)

// New is the KMS sealer of keyID that seals and opens (a seal.NewKMS).
func New(cfg aws.Config, keyID string) seal.Sealer { return newKMS(cfg, keyID) }

// NewSealing is the KMS sealer of keyID that only seals: its Open refuses (a seal.NewKMS).
func NewSealing(cfg aws.Config, keyID string) seal.Sealer { return (*sealing)(newKMS(cfg, keyID)) }

// NewOpening is the KMS sealer of keyID that only opens: its Seal refuses (a seal.NewKMS).
func NewOpening(cfg aws.Config, keyID string) seal.Sealer { return (*opening)(newKMS(cfg, keyID)) }

func newKMS(cfg aws.Config, keyID string) *KMS {
	return &KMS{Client: kms.NewFromConfig(cfg), KeyID: keyID}
}

var (
	errSealOnly = errors.New("kmsseal: this function links a sealer that only seals (NewSealing)")
	errOpenOnly = errors.New("kmsseal: this function links a sealer that only opens (NewOpening)")
)
