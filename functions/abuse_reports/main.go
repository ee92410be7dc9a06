// Command abuse_reports is the Lambda function serving the /abuse_reports routes.
package main

import (
	"tunnelapi/shared/families/abuse"
	"tunnelapi/shared/platform/serve"
)

func main() { serve.Main(abuse.ReportsDescriptor) }
