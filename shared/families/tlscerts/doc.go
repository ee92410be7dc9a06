// Package tlscerts holds the X.509 families: uploaded TLS certificates (a chain and its private
// key, the key sealed at rest and never returned) and certificate authorities (a CA certificate
// for mutual TLS). Every reported field is derived from the certificate at upload.
//
// The conventions it implements:
//   - Error codes follow the ngrok API: 1900 a certificate_pem that is not a PEM certificate
//     chain, 1902 an encrypted private key, 1903 a private_key_pem that is not a usable key, 1923
//     a key that is not the leaf certificate's; for authorities 1911 a ca_pem that is not a
//     certificate, 1912 more than one certificate, 1913 a certificate that is not a CA.
//   - Over-long description and metadata are 1914 and 1915 on certificates, 1916 and 1917 on
//     authorities (limits 255 and 4096 bytes).
//   - A certificate a reserved domain references cannot be deleted (1966) until the domain
//     detaches it, nor can a managed certificate (issued_at set) while its domain or ingress
//     holds it; likewise a certificate authority an edge's mutual TLS module references.
//   - Creates parse, validate and seal once per request (Prepare), before the transaction and
//     outside its retries; updates change only description and metadata.
package tlscerts
