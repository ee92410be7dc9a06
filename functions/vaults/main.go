// Command vaults is the Lambda function serving the /vaults and /vault_secrets routes.
package main

import (
	"tunnelapi/shared/families/vaults"
	"tunnelapi/shared/platform/serve"
	// Secrets' values are sealed (their descriptor sets Seals): KMS in AWS.
	_ "tunnelapi/shared/platform/seal/kmsseal"
)

func main() { serve.Main(vaults.VaultsDescriptor, vaults.SecretsDescriptor) }
