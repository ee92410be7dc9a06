package sshcerts

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"strings"
	"sync/atomic"

	"golang.org/x/crypto/ssh"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"
)

// Family error codes, as the ngrok API uses them.
const (
	CodeInvalidKeyType   = "ERR_NGROK_1936"
	CodeInvalidKeySize   = "ERR_NGROK_1939"
	CodeKeySizeNotRSA    = "ERR_NGROK_1940"
	CodeInvalidCurve     = "ERR_NGROK_1941"
	CodeCurveNotECDSA    = "ERR_NGROK_1942"
	CodeCANotFound       = "ERR_NGROK_1949"
	CodePublicKeyMissing = "ERR_NGROK_1952"
	CodeInvalidPublicKey = "ERR_NGROK_612"
	CodeCAHasCerts       = "ERR_NGROK_1964"
)

// Text codes: certificates use the first pair, authorities the second.
var (
	certificateTextCodes = api.TextCodes{Description: "ERR_NGROK_1914", Metadata: "ERR_NGROK_1915"}
	authorityTextCodes   = api.TextCodes{Description: "ERR_NGROK_1916", Metadata: "ERR_NGROK_1917"}
)

// Defaults of a new CA when the request leaves them out. The platform documents no default key
// type; ed25519 is what its examples use and the strongest cheap choice. RSA defaults to the
// larger size, as a CA outlives the keys it signs.
const (
	defaultKeyType = "ed25519"
	defaultRSASize = 4096
	defaultCurve   = "p256"
)

// AttrCertificates is the attribute of a CA item counting the certificates it signed.
const AttrCertificates = "certs"

// AuthorityItem is a stored SSH certificate authority. PrivateKey is the PKCS#8 DER of its key,
// sealed with the account and id as context. Certificates counts the certificates that name it;
// every change of the count also bumps the version, so a delete conditioned on the version it
// read (with a count of zero) cannot pass a certificate issued in between.
type AuthorityItem struct {
	store.Meta
	resource.Described
	PublicKey    string      `dynamodbav:"public_key"`
	KeyType      string      `dynamodbav:"key_type"`
	PrivateKey   seal.Sealed `dynamodbav:"private_key"`
	Certificates int64       `dynamodbav:"certs"`
}

// keyJSON is what the wire forms of SSH certificate authorities and certificates begin with:
// the resource's own members and its public key.
type keyJSON struct {
	resource.Head
	PublicKey string `json:"public_key"`
	KeyType   string `json:"key_type"`
}

// AuthorityJSON is the wire form of an SSH certificate authority.
type AuthorityJSON struct {
	keyJSON
}

type authorityCreate struct {
	api.Text
	PrivateKeyType *string `json:"private_key_type"`
	EllipticCurve  *string `json:"elliptic_curve"`
	KeySize        *int64  `json:"key_size"`
}

// KeySpec is a validated request for a CA key pair.
type KeySpec struct {
	Type  string // rsa, ecdsa, ed25519
	Bits  int    // rsa only
	Curve string // ecdsa only: p256, p384, p521
}

// curves maps the accepted elliptic_curve names to their curves.
var curves = map[string]elliptic.Curve{"p256": elliptic.P256(), "p384": elliptic.P384(), "p521": elliptic.P521()}

// ParseKeySpec validates the key fields of a CA create. Zero values (an empty string, a key size
// of 0) count as not supplied, as some clients send every field.
func ParseKeySpec(keyType, curve *string, size *int64) (KeySpec, error) {
	spec := KeySpec{Type: defaultKeyType}
	if keyType != nil && *keyType != "" {
		spec.Type = strings.ToLower(*keyType)
	}
	hasCurve := curve != nil && *curve != ""
	hasSize := size != nil && *size != 0
	switch spec.Type {
	case "rsa", "ecdsa", "ed25519":
	default:
		return spec, api.BadRequest(CodeInvalidKeyType, "private_key_type",
			"private_key_type %s is not one of rsa, ecdsa or ed25519", api.Describe(*keyType))
	}
	if hasSize && spec.Type != "rsa" {
		return spec, api.BadRequest(CodeKeySizeNotRSA, "key_size", "key_size applies only to private_key_type rsa")
	}
	if hasCurve && spec.Type != "ecdsa" {
		return spec, api.BadRequest(CodeCurveNotECDSA, "elliptic_curve", "elliptic_curve applies only to private_key_type ecdsa")
	}
	switch spec.Type {
	case "rsa":
		spec.Bits = defaultRSASize
		if hasSize {
			if *size != 2048 && *size != 4096 {
				return spec, api.BadRequest(CodeInvalidKeySize, "key_size", "key_size %d is not 2048 or 4096", *size)
			}
			spec.Bits = int(*size)
		}
	case "ecdsa":
		spec.Curve = defaultCurve
		if hasCurve {
			c := strings.ToLower(*curve)
			if _, ok := curves[c]; !ok {
				return spec, api.BadRequest(CodeInvalidCurve, "elliptic_curve", "elliptic_curve %s is not one of p256, p384 or p521", api.Describe(*curve))
			}
			spec.Curve = c
		}
	}
	return spec, nil
}

// generated counts the key pairs Generate started in this process: the tests' observation that
// a refused caller starts none (export_test.go).
var generated atomic.Int64

// Generate makes a key pair for spec.
func (spec KeySpec) Generate() (crypto.Signer, error) {
	generated.Add(1)
	switch spec.Type {
	case "rsa":
		return rsa.GenerateKey(rand.Reader, spec.Bits)
	case "ecdsa":
		return ecdsa.GenerateKey(curves[spec.Curve], rand.Reader)
	default:
		_, k, err := ed25519.GenerateKey(rand.Reader)
		return k, err
	}
}

// AuthorizedKey is pub in authorized-keys form, without the trailing newline.
func AuthorizedKey(pub ssh.PublicKey) string {
	return strings.TrimSuffix(string(ssh.MarshalAuthorizedKey(pub)), "\n")
}

// SSHCertificateAuthoritiesDescriptor is the /ssh_certificate_authorities family.
var SSHCertificateAuthoritiesDescriptor = &resource.Descriptor{
	Path: "/ssh_certificate_authorities", Prefix: ids.SSHCertificateAuthority, ListKey: "ssh_certificate_authorities",
	EventKind: "ssh_certificate_authority", Filter: true,
	Binding: func() resource.Binding { return resource.Bind(newAuthorities).Keeping(resource.Seals) },
}

// Authorities is the SSH certificate authority family's rules.
type Authorities struct {
	*resource.Family[AuthorityItem, *AuthorityItem]
	resource.Prepared[*AuthorityItem]
}

func newAuthorities(f *resource.Family[AuthorityItem, *AuthorityItem]) Authorities {
	return Authorities{Family: f}
}

// Render returns an SSH certificate authority as GET returns it; the private key never appears.
func (f Authorities) Render(r *api.Request, it *AuthorityItem) any {
	return AuthorityJSON{keyJSON{Head: resource.NewHead(r, f.Path, &it.Meta, it.Described), PublicKey: it.PublicKey, KeyType: it.KeyType}}
}

// Prepare generates and seals the key pair. Key generation (an RSA 4096 key takes up to seconds)
// runs once per request, before the transaction, never inside its retries.
func (f Authorities) Prepare(ctx context.Context, r *api.Request, it *AuthorityItem) error {
	var in authorityCreate
	if err := it.DecodeCreate(r, authorityTextCodes, &in); err != nil {
		return err
	}
	spec, err := ParseKeySpec(in.PrivateKeyType, in.EllipticCurve, in.KeySize)
	if err != nil {
		return err
	}
	key, err := spec.Generate()
	if err != nil {
		return err
	}
	pub, err := ssh.NewPublicKey(key.Public())
	if err != nil {
		return err
	}
	sealed, err := seal.SealPrivateKey(ctx, f.Kit.Seal, key, it.AccountID, it.ID)
	if err != nil {
		return err
	}
	it.PublicKey = AuthorizedKey(pub)
	it.KeyType = spec.Type
	it.PrivateKey = sealed
	return nil
}

// Update changes description and metadata, the only mutable fields.
func (Authorities) Update(ctx context.Context, r *api.Request, it *AuthorityItem, m *resource.Mutation) error {
	return it.UpdateText(r, authorityTextCodes)
}

// Delete refuses to delete a CA that still has certificates; the version condition of the
// delete makes the count it read current.
func (Authorities) Delete(ctx context.Context, r *api.Request, it *AuthorityItem, m *resource.Mutation) error {
	if it.Certificates > 0 {
		return api.BadRequest(CodeCAHasCerts, "id",
			"the SSH certificate authority still has %d certificates; delete them first", it.Certificates)
	}
	return nil
}

// Signer opens the CA's sealed private key for signing.
func (a *AuthorityItem) Signer(ctx context.Context, s seal.Sealer) (ssh.Signer, error) {
	key, err := seal.OpenPrivateKey(ctx, s, a.PrivateKey, a.AccountID, a.ID)
	if err != nil {
		return nil, err
	}
	return ssh.NewSignerFromKey(key)
}
