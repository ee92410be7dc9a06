// Command https_edges is the Lambda function serving the /edges/https routes, routes and
// modules included.
package main

import (
	"tunnelapi/shared/families/httpsedges"
	"tunnelapi/shared/platform/serve"
	// The family seals secrets (its descriptor sets Seals): KMS in AWS.
	_ "tunnelapi/shared/platform/seal/kmsseal"
)

func main() { serve.Main(httpsedges.HTTPSEdgesDescriptor) }
