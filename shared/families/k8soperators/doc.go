// Package k8soperators holds the /kubernetes_operators family: the records the platform's
// Kubernetes operator keeps of itself (it registers on start, updates its deployment and
// binding, and lists its bound endpoints), which the Terraform provider's
// ngrok_kubernetes_operator data source reads.
//
// The conventions it implements:
//   - enabled_features is a subset of bindings, ingress and gateway, matched without regard to
//     case and stored in lower case (the platform answers ["ingress"] to ["Ingress"]); repeats
//     are kept once. Anything else is ERR_NGROK_215 naming enabled_features. region is global
//     (the default) or one of the deployment's regions (REGIONS).
//   - A binding's csr (PEM, "CERTIFICATE REQUEST") is signed into binding.cert: a client
//     certificate for the operator's mutual TLS connection, its subject the operator's id,
//     valid from the signing for certValidity. A CSR that does not parse, whose signature does
//     not verify, or whose key is weak (RSA under 2048 bits, an elliptic curve other than P-256,
//     P-384 or P-521) is ERR_NGROK_215 naming binding.csr. Without one, cert is "" with zero
//     timestamps, as the platform renders it; a later csr (PATCH) replaces the certificate.
//   - Each account has its own certificate authority, made the first time one of its operators
//     sends a CSR: an ECDSA P-256 key, sealed like every private key (package seal) and kept
//     with its self-signed certificate in one item (store.OperatorCAKey). Per account rather
//     than per deployment, so that a certificate binds an operator to its account alone (a
//     verifier trusting one account's CA trusts no other account's operators), and a
//     compromised or rotated CA key concerns one account.
//   - binding.endpoint_selectors are filter expressions (package listfilter's dialect) over
//     obj, an endpoint as GET /endpoints/{id} returns it; one that does not compile is
//     ERR_NGROK_215 naming it. endpoint_selectors is null when there are none.
//   - GET /kubernetes_operators/{id}/bound_endpoints lists, newest first and paged like every
//     list, the account's endpoints bound to the operator: with the bindings feature enabled,
//     the endpoints with the kubernetes binding that one of its selectors matches. Without a
//     data plane, agent endpoints never exist here, so these are cloud endpoints made with
//     bindings ["kubernetes"]; an operator without the feature or a selector has none.
//   - A create or update with a CSR reads the account's CA (one GetItem, and the key unsealed:
//     a KMS Decrypt in AWS) before its transaction; the account's first also generates the CA
//     and puts it, conditioned on its absence (a concurrent first loses and reads the winner's).
//     Every create first reads the caller's items, so that nothing is signed, unsealed or
//     generated for a refused caller (package resource: a Prepare that keeps secrets runs
//     after verification); otherwise, without a CSR, the operations cost what every family's do.
//   - binding.ingress_endpoint is the operator's when it sends one; an update of an operator
//     without one gives it the deployment's (IngressEndpoint: connect.endpoints.<BASE_DOMAIN>:443),
//     as the platform's recorded update answers its own (connect.ngrok-endpoints.com:443) for
//     an operator registered without one; a create leaves it out, as the platform's does.
//   - principal is the principal that created the operator, its uri "" as the platform
//     renders it. Free text over its limits is ERR_NGROK_215, as are deployment strings and
//     ingress_endpoint (host:port) over 255 bytes or malformed.
package k8soperators
