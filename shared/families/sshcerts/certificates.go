package sshcerts

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"golang.org/x/crypto/ssh"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// CertificateItem is a stored SSH user or host certificate. Options and extensions are kept for
// user certificates only.
type CertificateItem struct {
	store.Meta
	resource.Described
	AuthorityID     string            `dynamodbav:"ca_id"`
	PublicKey       string            `dynamodbav:"public_key"`
	KeyType         string            `dynamodbav:"key_type"`
	Principals      []string          `dynamodbav:"principals"`
	CriticalOptions map[string]string `dynamodbav:"critical_options,omitempty"`
	Extensions      map[string]string `dynamodbav:"extensions,omitempty"`
	ValidAfter      int64             `dynamodbav:"valid_after"`
	ValidUntil      int64             `dynamodbav:"valid_until"`
	Certificate     string            `dynamodbav:"certificate"`
}

// HostCertificateJSON is the wire form of an SSH host certificate.
type HostCertificateJSON struct {
	keyJSON
	SSHCertificateAuthorityID string   `json:"ssh_certificate_authority_id"`
	Principals                []string `json:"principals"`
	ValidAfter                string   `json:"valid_after"`
	ValidUntil                string   `json:"valid_until"`
	Certificate               string   `json:"certificate"`
}

// UserCertificateJSON is the wire form of an SSH user certificate: a host certificate's members
// and the certificate's critical options and extensions.
type UserCertificateJSON struct {
	HostCertificateJSON
	CriticalOptions map[string]string `json:"critical_options"`
	Extensions      map[string]string `json:"extensions"`
}

// certificateCreate is what user and host certificate creates share.
type certificateCreate struct {
	SSHCertificateAuthorityID *string   `json:"ssh_certificate_authority_id"`
	PublicKey                 *string   `json:"public_key"`
	Principals                *[]string `json:"principals"`
	ValidAfter                *string   `json:"valid_after"`
	ValidUntil                *string   `json:"valid_until"`
	api.Text
}

type userCertificateCreate struct {
	certificateCreate
	CriticalOptions *map[string]string `json:"critical_options"`
	Extensions      *map[string]string `json:"extensions"`
}

// kind is what differs between the user and host certificate families besides their
// descriptors.
type kind struct {
	certType uint32
	// validity is the default valid_until for a given valid_after.
	validity func(time.Time) time.Time
}

var (
	userKind = kind{certType: ssh.UserCert, validity: func(t time.Time) time.Time { return t.Add(24 * time.Hour) }}
	hostKind = kind{certType: ssh.HostCert, validity: func(t time.Time) time.Time { return t.AddDate(1, 0, 0) }}
)

// SSHUserCertificatesDescriptor is the /ssh_user_certificates family.
var SSHUserCertificatesDescriptor = &resource.Descriptor{
	Path: "/ssh_user_certificates", Prefix: ids.SSHUserCertificate, ListKey: "ssh_user_certificates", EventKind: "ssh_user_certificate",
	Binding: func() resource.Binding { return resource.Bind(newCertificates).Keeping(resource.Opens) },
}

// SSHHostCertificatesDescriptor is the /ssh_host_certificates family.
var SSHHostCertificatesDescriptor = &resource.Descriptor{
	Path: "/ssh_host_certificates", Prefix: ids.SSHHostCertificate, ListKey: "ssh_host_certificates", EventKind: "ssh_host_certificate",
	Binding: func() resource.Binding { return resource.Bind(newCertificates).Keeping(resource.Opens) },
}

// newCertificates makes the hooks of the SSH user or host certificates, the kind from the
// family's id prefix, each family with its own cache of CA keys.
func newCertificates(f *resource.Family[CertificateItem, *CertificateItem]) Certificates {
	c := Certificates{Family: f, kind: userKind, signers: &signerCache{}}
	if f.Prefix == ids.SSHHostCertificate {
		c.kind = hostKind
	}
	return c
}

// Certificates is the rules of the SSH user and host certificate families, which differ only
// in their kind.
type Certificates struct {
	*resource.Family[CertificateItem, *CertificateItem]
	kind    kind
	signers *signerCache
}

// Render returns a certificate as GET returns it, in the user or host form of its kind.
func (f Certificates) Render(r *api.Request, it *CertificateItem) any {
	host := HostCertificateJSON{keyJSON: keyJSON{Head: resource.NewHead(r, f.Path, &it.Meta, it.Described), PublicKey: it.PublicKey, KeyType: it.KeyType},
		SSHCertificateAuthorityID: it.AuthorityID, Principals: api.Slice(it.Principals),
		ValidAfter: api.Timestamp(it.ValidAfter), ValidUntil: api.Timestamp(it.ValidUntil), Certificate: it.Certificate}
	if f.kind.certType == ssh.HostCert {
		return host
	}
	return UserCertificateJSON{HostCertificateJSON: host, CriticalOptions: api.Map(it.CriticalOptions), Extensions: api.Map(it.Extensions)}
}

// Prepare validates the body and signs the certificate, once per request; each transaction
// attempt then only counts the certificate on the CA, conditioned on the CA still existing. The
// CA's key comes from the cache or is read (with the caller check, in one round trip) and opened.
func (f Certificates) Prepare(ctx context.Context, r *api.Request, it *CertificateItem) error {
	pub, err := f.decode(r, it)
	if err != nil {
		return err
	}
	signer := f.signers.get(it.AccountID, it.AuthorityID)
	if signer == nil {
		ca, err := loadAuthority(ctx, f.Kit, r, it.AuthorityID)
		if err != nil {
			return err
		}
		if signer, err = ca.Signer(ctx, f.Kit.Seal); err != nil {
			return err
		}
		f.signers.put(it.AccountID, it.AuthorityID, signer)
	}
	cert, err := NewCertificate(signer, pub, f.kind.certType, it)
	if err != nil {
		return err
	}
	it.Certificate = AuthorizedKey(cert)
	return nil
}

// Create counts the certificate on its CA, refused when the CA no longer exists.
func (Certificates) Create(ctx context.Context, r *api.Request, it *CertificateItem, m *resource.Mutation) (any, error) {
	m.Update("ca", store.ResourceKey(it.AccountID, it.AuthorityID), countBy(1), store.Exists())
	m.Refuse("ca", caNotFound(it.AuthorityID))
	return nil, nil
}

// Update changes description and metadata, the only mutable fields.
func (Certificates) Update(ctx context.Context, r *api.Request, it *CertificateItem, m *resource.Mutation) error {
	return it.UpdateText(r, certificateTextCodes)
}

// Delete uncounts the certificate on its CA.
func (Certificates) Delete(ctx context.Context, r *api.Request, it *CertificateItem, m *resource.Mutation) error {
	m.Update("ca", store.ResourceKey(it.AccountID, it.AuthorityID), countBy(-1),
		store.Exists(), expression.Name(AttrCertificates).GreaterThan(expression.Value(0)))
	return nil
}

// countBy changes a CA's certificate count and bumps its version, so that a CA delete
// conditioned on the version it read fails if a certificate came or went in between.
func countBy(n int) expression.UpdateBuilder {
	return expression.Add(expression.Name(AttrCertificates), expression.Value(n)).
		Add(expression.Name(store.AttrVersion), expression.Value(1))
}

func caNotFound(id string) error {
	return api.BadRequest(CodeCANotFound, "ssh_certificate_authority_id",
		"ssh_certificate_authority_id %s is not an SSH certificate authority of this account", api.Describe(id))
}

// decode validates a create body into it; nothing is read or signed yet.
func (f Certificates) decode(r *api.Request, it *CertificateItem) (ssh.PublicKey, error) {
	var in userCertificateCreate
	var err error
	if f.kind.certType == ssh.HostCert {
		err = api.Decode(r, &in.certificateCreate)
	} else {
		err = api.Decode(r, &in)
	}
	if err != nil {
		return nil, err
	}
	if err := it.SetText(certificateTextCodes, in.Text); err != nil {
		return nil, err
	}
	if in.SSHCertificateAuthorityID == nil || *in.SSHCertificateAuthorityID == "" {
		return nil, api.BadRequest(CodeCANotFound, "ssh_certificate_authority_id", "ssh_certificate_authority_id is required")
	}
	if in.PublicKey == nil {
		return nil, api.BadRequest(CodePublicKeyMissing, "public_key", "public_key is required")
	}
	pub, keyType, err := ParsePublicKey(*in.PublicKey)
	if err != nil {
		return nil, err
	}
	principals, err := Principals(in.Principals)
	if err != nil {
		return nil, err
	}
	if f.kind.certType == ssh.UserCert {
		if it.CriticalOptions, err = CriticalOptions(in.CriticalOptions); err != nil {
			return nil, err
		}
		if it.Extensions, err = Extensions(in.Extensions); err != nil {
			return nil, err
		}
	}
	va, vu, err := Validity(in.ValidAfter, in.ValidUntil, time.Now(), f.kind.validity)
	if err != nil {
		return nil, err
	}
	it.AuthorityID = *in.SSHCertificateAuthorityID
	it.PublicKey = strings.TrimSpace(*in.PublicKey)
	it.KeyType = keyType
	it.Principals = principals
	it.ValidAfter, it.ValidUntil = va.Unix(), vu.Unix()
	return pub, nil
}

// loadAuthority reads the CA in the same consistent round trip that verifies the caller.
func loadAuthority(ctx context.Context, k *resource.Kit, r *api.Request, id string) (*AuthorityItem, error) {
	if !ids.Is(id, ids.SSHCertificateAuthority) {
		return nil, caNotFound(id)
	}
	items, err := k.Read(ctx, r, store.ResourceKey(r.Caller().AccountID, id))
	if err != nil {
		return nil, err
	}
	if items[0] == nil {
		return nil, caNotFound(id)
	}
	var ca AuthorityItem
	if err := store.Unmarshal(items[0], &ca); err != nil {
		return nil, err
	}
	return &ca, nil
}

// NewCertificate signs pub with signer as it describes: type, key id, principals, validity,
// options and extensions. The serial is random, so that a key revocation list can name it.
func NewCertificate(signer ssh.Signer, pub ssh.PublicKey, certType uint32, it *CertificateItem) (*ssh.Certificate, error) {
	var serial [8]byte
	if _, err := rand.Read(serial[:]); err != nil {
		return nil, err
	}
	cert := &ssh.Certificate{
		Key:             pub,
		Serial:          binary.BigEndian.Uint64(serial[:]),
		CertType:        certType,
		KeyId:           it.ID,
		ValidPrincipals: it.Principals,
		ValidAfter:      uint64(it.ValidAfter),
		ValidBefore:     uint64(it.ValidUntil),
		Permissions:     ssh.Permissions{CriticalOptions: it.CriticalOptions, Extensions: it.Extensions},
	}
	if err := cert.SignCert(rand.Reader, signer); err != nil {
		return nil, err
	}
	return cert, nil
}
