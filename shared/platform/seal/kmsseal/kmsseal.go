// Package kmsseal links the KMS client into the functions that seal or open secrets, with only
// the KMS operations each uses. A function registers the sealer it needs with package seal
// (Register, RegisterSealing or RegisterOpening), so a function that keeps no secrets does not
// link the client at all, one that only seals does not link its Decrypt and one that only opens
// does not link its GenerateDataKey.
package kmsseal

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"tunnelapi/shared/platform/seal"
)

// Register makes seal.New build KMS sealers that seal and open.
func Register() {
	seal.RegisterKMS(func(cfg aws.Config, keyID string) seal.Sealer { return newKMS(cfg, keyID) })
}

// RegisterSealing makes seal.New build KMS sealers that only seal: their Open refuses.
func RegisterSealing() {
	seal.RegisterKMS(func(cfg aws.Config, keyID string) seal.Sealer { return (*sealing)(newKMS(cfg, keyID)) })
}

// RegisterOpening makes seal.New build KMS sealers that only open: their Seal refuses.
func RegisterOpening() {
	seal.RegisterKMS(func(cfg aws.Config, keyID string) seal.Sealer { return (*opening)(newKMS(cfg, keyID)) })
}

func newKMS(cfg aws.Config, keyID string) *KMS {
	return &KMS{Client: kms.NewFromConfig(cfg), KeyID: keyID}
}

var (
	errSealOnly = errors.New("kmsseal: this function registered a sealer that only seals (RegisterSealing)")
	errOpenOnly = errors.New("kmsseal: this function registered a sealer that only opens (RegisterOpening)")
)
