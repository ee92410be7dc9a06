// Command agent_ingresses is the Lambda function serving the /agent_ingresses routes.
package main

import (
	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/platform/runtime"
)

func main() { runtime.Main(domains.AgentIngressesDescriptor) }
