package seal

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"

	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"fmt"
	"sort"
	"sync"

	"tunnelapi/shared/platform/derrors"
)

// Sealed is an encrypted secret as stored: the wrapped data key and the ciphertext.
type Sealed struct {
	KeyID      string `dynamodbav:"kid" json:"-"`
	WrappedKey []byte `dynamodbav:"wk" json:"-"`
	Nonce      []byte `dynamodbav:"n" json:"-"`
	Ciphertext []byte `dynamodbav:"ct" json:"-"`
}

// Sealer seals and opens secrets. aad binds a secret to where it is stored (account and
// resource id), so a sealed value copied onto another item does not open.
type Sealer interface {
	Seal(ctx context.Context, plaintext []byte, aad map[string]string) (Sealed, error)
	Open(ctx context.Context, s Sealed, aad map[string]string) ([]byte, error)
}

// ResourceContext is the aad of a secret stored on the resource id of account, so that a sealed
// value copied onto another resource or account does not open.
func ResourceContext(account, id string) map[string]string {
	return map[string]string{"account": account, "id": id}
}

// ErrOpen reports a sealed value that does not open (wrong key, tampered, or wrong aad).
var ErrOpen = errors.New("seal: cannot open sealed value")

// NewKMS makes the KMS sealer of the key keyID: package kmsseal's New, NewSealing or
// NewOpening, which only the functions that seal or open secrets link.
type NewKMS func(cfg aws.Config, keyID string) Sealer

// Settings say how a process seals secrets (package config reads them: SEAL_KMS_KEY_ID,
// SEAL_LOCAL_KEY, SEAL_KEY_FILE).
type Settings struct {
	// KMSKeyID is the KMS key of the envelope encryption; empty: a local key.
	KMSKeyID string
	// LocalKey is the local master key itself (for a container that cannot see its file, as
	// under sam local); empty: the key in KeyFile.
	LocalKey []byte
	// KeyFile is the local master key's file, created on first use; empty (a Lambda function):
	// no key file.
	KeyFile string
	// NewKMS makes the sealer of KMSKeyID; nil in a process that links no KMS client, whose
	// sealer then refuses to work.
	NewKMS NewKMS
}

// New returns the KMS sealer when s.KMSKeyID is set; else the local sealer over s.LocalKey;
// else the local key-file sealer of s.KeyFile, created on first use; else a sealer that refuses
// to work. No network I/O. A process without s.NewKMS gets a sealer that refuses to work, which
// it never asks it to.
func New(cfg aws.Config, s Settings) Sealer {
	switch {
	case s.KMSKeyID != "":
		if s.NewKMS == nil {
			return &broken{errUnavailable}
		}
		return s.NewKMS(cfg, s.KMSKeyID)
	case len(s.LocalKey) > 0:
		return NewLocal(s.LocalKey)
	case s.KeyFile != "":
		return &lazyLocal{path: s.KeyFile}
	default:
		return &broken{errNoKey}
	}
}

var errNoKey = errors.New("seal: no key: set SEAL_KMS_KEY_ID, SEAL_LOCAL_KEY or SEAL_KEY_FILE")

// broken is the sealer of an environment it cannot work in (no KMS support linked, a malformed
// key): every use fails with err.
type broken struct{ err error }

// Seal implements Sealer.
func (b *broken) Seal(context.Context, []byte, map[string]string) (Sealed, error) {
	return Sealed{}, b.err
}

// Open implements Sealer.
func (b *broken) Open(context.Context, Sealed, map[string]string) ([]byte, error) {
	return nil, b.err
}

// Restrict is s for code that declared what it does with secrets: Seal fails unless seals, Open
// unless opens, with an error saying why (the declaration).
func Restrict(s Sealer, seals, opens bool, why string) Sealer {
	if seals && opens {
		return s
	}
	return &restricted{s, seals, opens, errors.New("seal: " + why)}
}

// restricted is Restrict's sealer.
type restricted struct {
	s            Sealer
	seals, opens bool
	err          error
}

// Seal implements Sealer.
func (r *restricted) Seal(ctx context.Context, p []byte, aad map[string]string) (Sealed, error) {
	if !r.seals {
		return Sealed{}, r.err
	}
	return r.s.Seal(ctx, p, aad)
}

// Open implements Sealer.
func (r *restricted) Open(ctx context.Context, s Sealed, aad map[string]string) ([]byte, error) {
	if !r.opens {
		return nil, r.err
	}
	return r.s.Open(ctx, s, aad)
}

var errUnavailable = errors.New("seal: this function was built without KMS support (register it with shared/platform/seal/kmsseal)")

// lazyLocal loads the key file on first use, so functions that never seal never touch it.
type lazyLocal struct {
	path string
	once sync.Once
	l    *Local
	err  error
}

func (z *lazyLocal) load() (*Local, error) {
	z.once.Do(func() { z.l, z.err = LoadKeyFile(z.path) })
	return z.l, z.err
}

// Seal implements Sealer.
func (z *lazyLocal) Seal(ctx context.Context, p []byte, aad map[string]string) (Sealed, error) {
	l, err := z.load()
	if err != nil {
		return Sealed{}, err
	}
	return l.Seal(ctx, p, aad)
}

// Open implements Sealer.
func (z *lazyLocal) Open(ctx context.Context, s Sealed, aad map[string]string) ([]byte, error) {
	l, err := z.load()
	if err != nil {
		return nil, err
	}
	return l.Open(ctx, s, aad)
}

func aadBytes(aad map[string]string) []byte {
	keys := make([]string, 0, len(aad))
	for k := range aad {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []byte
	for _, k := range keys {
		b = fmt.Appendf(b, "%d:%s%d:%s", len(k), k, len(aad[k]), aad[k])
	}
	return b
}

// SealWith encrypts plaintext under dataKey (for sealers whose data keys come from elsewhere).
func SealWith(dataKey, plaintext []byte, aad map[string]string) (nonce, ct []byte, err error) {
	return sealWith(dataKey, plaintext, aadBytes(aad))
}

// OpenWith decrypts s's ciphertext with an unwrapped data key.
func OpenWith(dataKey []byte, s Sealed, aad map[string]string) ([]byte, error) {
	return openWith(dataKey, s.Nonce, s.Ciphertext, aadBytes(aad))
}

func sealWith(dataKey, plaintext, aad []byte) (nonce, ct []byte, err error) {
	g, err := gcm(dataKey)
	if err != nil {
		return nil, nil, err
	}
	nonce = make([]byte, g.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, nil, err
	}
	return nonce, g.Seal(nil, nonce, plaintext, aad), nil
}

func openWith(dataKey, nonce, ct, aad []byte) ([]byte, error) {
	g, err := gcm(dataKey)
	if err != nil {
		return nil, err
	}
	if len(nonce) != g.NonceSize() {
		return nil, ErrOpen
	}
	pt, err := g.Open(nil, nonce, ct, aad)
	if err != nil {
		return nil, ErrOpen
	}
	return pt, nil
}

func gcm(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// SealPrivateKey seals a crypto private key (as PKCS#8 DER) for the resource id of account; the
// DER copy is wiped once sealed.
func SealPrivateKey(ctx context.Context, s Sealer, key any, account, id string) (_ Sealed, err error) {
	defer derrors.Wrap(&err, "seal.SealPrivateKey(%s)", id)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Sealed{}, err
	}
	defer clear(der)
	return s.Seal(ctx, der, ResourceContext(account, id))
}

// OpenPrivateKey opens what SealPrivateKey sealed for the resource id of account.
func OpenPrivateKey(ctx context.Context, s Sealer, sealed Sealed, account, id string) (_ any, err error) {
	defer derrors.Wrap(&err, "seal.OpenPrivateKey(%s)", id)
	der, err := s.Open(ctx, sealed, ResourceContext(account, id))
	if err != nil {
		return nil, err
	}
	defer clear(der)
	return x509.ParsePKCS8PrivateKey(der)
}
