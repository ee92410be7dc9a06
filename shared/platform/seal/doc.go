// Package seal encrypts secrets at rest with envelope encryption: each secret gets a fresh
// AES-256-GCM data key, and only the data key wrapped by a master key is stored beside it. In
// AWS the master key is a KMS key; locally it is a key file. Both sit behind Sealer.
package seal
