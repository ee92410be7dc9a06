// Package sshcerts holds the SSH certificate families: certificate authorities whose key pair is
// generated here (the private key sealed at rest, never returned), and the user and host
// certificates they sign. A CA keeps a count of its certificates, changed in the same
// transaction as each certificate's create and delete, so that a CA with certificates cannot be
// deleted and a CA being deleted cannot sign.
//
// The conventions it implements:
//   - Error codes follow the ngrok API: 1936 an unknown private_key_type, 1939 a key_size other
//     than 2048 or 4096, 1940 a key_size for a key type other than rsa, 1941 an unknown
//     elliptic_curve, 1942 an elliptic_curve for a key type other than ecdsa, 1949 a missing or
//     unknown ssh_certificate_authority_id, 1952 a missing public_key, 612 a public_key that is
//     not exactly one usable key, 1964 deleting a CA that still has certificates.
//   - Over-long description and metadata are 1914 and 1915 on certificates, 1916 and 1917 on
//     authorities (limits 255 and 4096 bytes).
//   - Key generation and signing run once per request (Prepare), before the transaction and
//     outside its retries; updates change only description and metadata.
package sshcerts
