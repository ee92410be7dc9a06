// Package kmsseal links the KMS client into the functions that seal or open secrets. Importing it
// registers the client factory with package seal, so functions that never seal stay small.
package kmsseal

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"tunnelapi/shared/platform/seal"
)

func init() {
	seal.RegisterKMS(func(cfg aws.Config, keyID string) seal.Sealer {
		return &KMS{Client: kms.NewFromConfig(cfg), KeyID: keyID}
	})
}
