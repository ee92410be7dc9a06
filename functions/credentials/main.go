// Command credentials is the Lambda function serving the /credentials routes.
package main

import (
	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/serve"
	// The family seals secrets (its descriptor sets Seals): KMS in AWS.
	_ "tunnelapi/shared/platform/seal/kmsseal"
)

func main() { serve.Main(principals.CredentialsDescriptor) }
