// Package k8soperators holds the /kubernetes_operators family: the records the platform's
// Kubernetes operator keeps of itself (it registers on start, updates its deployment and
// binding, and lists its bound endpoints), which the Terraform provider's
// ngrok_kubernetes_operator data source reads.
//
// The rules of its members, its certificates and its bound endpoints are on
// KubernetesOperatorsDescriptor.
package k8soperators
