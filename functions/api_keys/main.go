// Command api_keys is the Lambda function serving the /api_keys routes.
package main

import (
	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/runtime"
)

func main() { runtime.Main(principals.APIKeysDescriptor) }
