// Command agent_ingresses is the Lambda function serving the /agent_ingresses routes.
package main

import (
	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/platform/serve"
)

func main() { serve.Main(domains.AgentIngressesDescriptor) }
