package sshcerts

import (
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// signerTTL bounds how long an opened CA key stays in memory; maxSigners how many do.
const (
	signerTTL  = 5 * time.Minute
	maxSigners = 256
)

// signerCache keeps opened CA keys for a few minutes, so that issuing a certificate costs one
// transaction instead of a read, a key unwrap (a KMS call in AWS) and a transaction. It is safe
// because a CA's key never changes and its id is never reused, and because the transaction that
// stores a certificate is conditioned on the CA still existing: a cached key of a deleted CA
// signs nothing that is stored or returned, and leaves memory when its entry expires. Like the
// AWS Encryption SDK's data key cache, it trades a bounded lifetime of plaintext key material in
// the process for those round trips.
type signerCache struct {
	mu sync.Mutex
	m  map[string]cachedSigner
}

type cachedSigner struct {
	signer ssh.Signer
	until  time.Time
}

func signerKey(account, ca string) string { return account + "/" + ca }

// get returns the cached signer of the CA, or nil.
func (c *signerCache) get(account, ca string) ssh.Signer {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[signerKey(account, ca)]
	if !ok || time.Now().After(e.until) {
		delete(c.m, signerKey(account, ca))
		return nil
	}
	return e.signer
}

// put caches the signer of the CA, dropping expired entries (or all of them) when full.
func (c *signerCache) put(account, ca string, s ssh.Signer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if c.m == nil {
		c.m = make(map[string]cachedSigner)
	}
	if len(c.m) >= maxSigners {
		for k, e := range c.m {
			if now.After(e.until) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= maxSigners {
			clear(c.m)
		}
	}
	c.m[signerKey(account, ca)] = cachedSigner{signer: s, until: now.Add(signerTTL)}
}
