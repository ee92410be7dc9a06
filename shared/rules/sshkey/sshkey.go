// Package sshkey checks the SSH public keys users upload (keys to sign, keys to authenticate
// with): one key in OpenSSH authorized-keys form, of a type and size worth trusting.
package sshkey

import (
	"crypto/rsa"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"

	"tunnelapi/shared/platform/api"
)

// MaxBytes bounds an uploaded key's text: an RSA 16384 key is under 3 KB in authorized-keys form.
const MaxBytes = 16 << 10

// MaxRSABits is the largest RSA key accepted.
const MaxRSABits = 16384

// ErrMissing reports an empty key: families answer it with their own "key required" code.
var ErrMissing = errors.New("public_key is required")

// Parse parses one public key in authorized-keys form (an optional options prefix and comment
// are allowed) and returns it with its type name: rsa (of minRSABits to MaxRSABits bits),
// ecdsa or ed25519. An empty text is ErrMissing; any other error says what is wrong with it.
func Parse(text string, minRSABits int) (ssh.PublicKey, string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, "", ErrMissing
	}
	if len(text) > MaxBytes {
		return nil, "", fmt.Errorf("public_key is %d bytes long; the limit is %d bytes", len(text), MaxBytes)
	}
	pub, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(text))
	if err != nil {
		return nil, "", errors.New("public_key is not a public key in OpenSSH authorized-keys format")
	}
	if len(strings.TrimSpace(string(rest))) > 0 {
		return nil, "", errors.New("public_key must hold exactly one key")
	}
	switch pub.Type() {
	case ssh.KeyAlgoED25519:
		return pub, "ed25519", nil
	case ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521:
		return pub, "ecdsa", nil
	case ssh.KeyAlgoRSA:
		ck, ok := pub.(ssh.CryptoPublicKey)
		if !ok {
			return nil, "", errors.New("public_key is not a usable RSA key")
		}
		rk, ok := ck.CryptoPublicKey().(*rsa.PublicKey)
		if !ok {
			return nil, "", errors.New("public_key is not a usable RSA key")
		}
		if n := rk.N.BitLen(); n < minRSABits || n > MaxRSABits {
			return nil, "", fmt.Errorf("public_key is an RSA key of %d bits; %d to %d bits are accepted", n, minRSABits, MaxRSABits)
		}
		return pub, "rsa", nil
	default:
		return nil, "", fmt.Errorf("public_key has type %s; only rsa, ecdsa and ed25519 keys are accepted", api.Describe(pub.Type()))
	}
}
