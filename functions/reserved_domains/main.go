// Command reserved_domains is the Lambda function serving the /reserved_domains routes.
package main

import (
	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/platform/serve"
)

func main() { serve.Main(domains.ReservedDomainsDescriptor) }
