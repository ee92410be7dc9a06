// Command credentials is the Lambda function serving the /credentials routes.
package main

import (
	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/runtime"
)

func main() { runtime.Main(principals.CredentialsDescriptor) }
