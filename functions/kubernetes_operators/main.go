// Command kubernetes_operators is the Lambda function serving the /kubernetes_operators routes.
package main

import (
	"tunnelapi/shared/families/k8soperators"
	"tunnelapi/shared/platform/serve"
	// The family seals secrets (its descriptor sets Seals): KMS in AWS.
	_ "tunnelapi/shared/platform/seal/kmsseal"
)

func main() { serve.Main(k8soperators.KubernetesOperatorsDescriptor) }
