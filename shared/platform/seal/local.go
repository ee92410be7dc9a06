package seal

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"tunnelapi/shared/platform/derrors"
)

// Local is the local-mode sealer: a 32-byte master key in a file wraps each data key.
type Local struct {
	master []byte
	id     string
}

// LoadKeyFile reads the master key at path, creating it (mode 0600) when absent.
func LoadKeyFile(path string) (_ *Local, err error) {
	defer derrors.Wrap(&err, "seal.LoadKeyFile(%s)", path)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		b = make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			return LoadKeyFile(path) // another process created it first
		}
		if err != nil {
			return nil, err
		}
		if _, err := f.Write(b); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	if len(b) != 32 {
		return nil, fmt.Errorf("the key file must hold 32 bytes, has %d", len(b))
	}
	return NewLocal(b), nil
}

// NewLocal returns a local sealer over a 32-byte master key.
func NewLocal(master []byte) *Local {
	sum := sha256.Sum256(master)
	return &Local{master: append([]byte(nil), master...), id: "local:" + hex.EncodeToString(sum[:4])}
}

// Seal encrypts plaintext under a fresh data key wrapped by the master key.
func (l *Local) Seal(_ context.Context, plaintext []byte, aad map[string]string) (_ Sealed, err error) {
	defer derrors.Wrap(&err, "seal.Local.Seal")
	dk := make([]byte, 32)
	if _, err := rand.Read(dk); err != nil {
		return Sealed{}, err
	}
	ab := aadBytes(aad)
	wn, wk, err := sealWith(l.master, dk, ab)
	if err != nil {
		return Sealed{}, err
	}
	n, ct, err := sealWith(dk, plaintext, ab)
	if err != nil {
		return Sealed{}, err
	}
	return Sealed{KeyID: l.id, WrappedKey: append(wn, wk...), Nonce: n, Ciphertext: ct}, nil
}

// Open decrypts a value sealed by Seal with the same aad.
func (l *Local) Open(_ context.Context, s Sealed, aad map[string]string) ([]byte, error) {
	ab := aadBytes(aad)
	if s.KeyID != l.id || len(s.WrappedKey) < 12 {
		return nil, ErrOpen
	}
	dk, err := openWith(l.master, s.WrappedKey[:12], s.WrappedKey[12:], ab)
	if err != nil {
		return nil, err
	}
	return openWith(dk, s.Nonce, s.Ciphertext, ab)
}
