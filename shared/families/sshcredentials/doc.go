// Package sshcredentials is the /ssh_credentials family: public keys a principal's agents
// authenticate with over SSH, bound by an ACL and owned like tunnel credentials (package
// principals resolves the owner and checks the ACL). It is a package of its own so that the
// functions of package principals (API keys first) do not link golang.org/x/crypto/ssh.
//
// Conventions it implements:
//   - An SSH credential's public key is one rsa (at least 2048 bits), ecdsa or ed25519 key in
//     authorized-keys form (612 otherwise, 611 when missing), returned as sent; a uniqueness
//     guard keyed by its fingerprint, written in the create's transaction, holds it for one
//     credential across accounts: 609 when this account already has it, 610 when another does.
package sshcredentials
