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

// Certificate is a stored SSH user or host certificate. Options and extensions are kept for
// user certificates only.
type Certificate struct {
	store.Meta
	Description     string            `dynamodbav:"description"`
	Metadata        string            `dynamodbav:"metadata"`
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

// UserCertificateJSON is the wire form of an SSH user certificate.
type UserCertificateJSON struct {
	ID                        string            `json:"id"`
	URI                       string            `json:"uri"`
	CreatedAt                 string            `json:"created_at"`
	Description               string            `json:"description"`
	Metadata                  string            `json:"metadata"`
	PublicKey                 string            `json:"public_key"`
	KeyType                   string            `json:"key_type"`
	SSHCertificateAuthorityID string            `json:"ssh_certificate_authority_id"`
	Principals                []string          `json:"principals"`
	CriticalOptions           map[string]string `json:"critical_options"`
	Extensions                map[string]string `json:"extensions"`
	ValidAfter                string            `json:"valid_after"`
	ValidUntil                string            `json:"valid_until"`
	Certificate               string            `json:"certificate"`
}

// HostCertificateJSON is the wire form of an SSH host certificate.
type HostCertificateJSON struct {
	ID                        string   `json:"id"`
	URI                       string   `json:"uri"`
	CreatedAt                 string   `json:"created_at"`
	Description               string   `json:"description"`
	Metadata                  string   `json:"metadata"`
	PublicKey                 string   `json:"public_key"`
	KeyType                   string   `json:"key_type"`
	SSHCertificateAuthorityID string   `json:"ssh_certificate_authority_id"`
	Principals                []string `json:"principals"`
	ValidAfter                string   `json:"valid_after"`
	ValidUntil                string   `json:"valid_until"`
	Certificate               string   `json:"certificate"`
}

// certificateCreate is what user and host certificate creates share.
type certificateCreate struct {
	SSHCertificateAuthorityID *string   `json:"ssh_certificate_authority_id"`
	PublicKey                 *string   `json:"public_key"`
	Principals                *[]string `json:"principals"`
	ValidAfter                *string   `json:"valid_after"`
	ValidUntil                *string   `json:"valid_until"`
	Description               *string   `json:"description"`
	Metadata                  *string   `json:"metadata"`
}

type userCertificateCreate struct {
	certificateCreate
	CriticalOptions *map[string]string `json:"critical_options"`
	Extensions      *map[string]string `json:"extensions"`
}

// kind is what differs between the user and host certificate families.
type kind struct {
	prefix, path, listKey, eventKind string
	certType                         uint32
	// validity is the default valid_until for a given valid_after.
	validity func(time.Time) time.Time
}

var (
	userKind = kind{prefix: ids.SSHUserCertificate, path: "/ssh_user_certificates", listKey: "ssh_user_certificates",
		eventKind: "ssh_user_certificate", certType: ssh.UserCert,
		validity: func(t time.Time) time.Time { return t.Add(24 * time.Hour) }}
	hostKind = kind{prefix: ids.SSHHostCertificate, path: "/ssh_host_certificates", listKey: "ssh_host_certificates",
		eventKind: "ssh_host_certificate", certType: ssh.HostCert,
		validity: func(t time.Time) time.Time { return t.AddDate(1, 0, 0) }}
)

// UserCertificates returns the /ssh_user_certificates family.
func UserCertificates(k *resource.Kit) *resource.Family[Certificate, *Certificate] {
	return certificates(k, userKind)
}

// HostCertificates returns the /ssh_host_certificates family.
func HostCertificates(k *resource.Kit) *resource.Family[Certificate, *Certificate] {
	return certificates(k, hostKind)
}

func certificates(k *resource.Kit, kd kind) *resource.Family[Certificate, *Certificate] {
	f := &resource.Family[Certificate, *Certificate]{
		Kit: k, Prefix: kd.prefix, Path: kd.path, ListKey: kd.listKey, EventKind: kd.eventKind,
	}
	f.Render = func(r *api.Request, it *Certificate) any {
		principals := it.Principals
		if principals == nil {
			principals = []string{}
		}
		if kd.certType == ssh.HostCert {
			return HostCertificateJSON{ID: it.ID, URI: f.URI(r, it.ID), CreatedAt: api.Timestamp(it.CreatedAt),
				Description: it.Description, Metadata: it.Metadata, PublicKey: it.PublicKey, KeyType: it.KeyType,
				SSHCertificateAuthorityID: it.AuthorityID, Principals: principals,
				ValidAfter: api.Timestamp(it.ValidAfter), ValidUntil: api.Timestamp(it.ValidUntil), Certificate: it.Certificate}
		}
		return UserCertificateJSON{ID: it.ID, URI: f.URI(r, it.ID), CreatedAt: api.Timestamp(it.CreatedAt),
			Description: it.Description, Metadata: it.Metadata, PublicKey: it.PublicKey, KeyType: it.KeyType,
			SSHCertificateAuthorityID: it.AuthorityID, Principals: principals,
			CriticalOptions: orEmpty(it.CriticalOptions), Extensions: orEmpty(it.Extensions),
			ValidAfter: api.Timestamp(it.ValidAfter), ValidUntil: api.Timestamp(it.ValidUntil), Certificate: it.Certificate}
	}
	signers := &signerCache{}
	// Signing happens once per request; each transaction attempt then only counts the
	// certificate on the CA, conditioned on the CA still existing. The CA's key comes from the
	// cache or is read (with the caller check, in one round trip) and opened.
	f.Prepare = func(ctx context.Context, r *api.Request, it *Certificate) error {
		pub, err := decodeCertificate(r, kd, it)
		if err != nil {
			return err
		}
		signer := signers.get(it.AccountID, it.AuthorityID)
		if signer == nil {
			ca, err := loadAuthority(ctx, k, r, it.AuthorityID)
			if err != nil {
				return err
			}
			if signer, err = ca.Signer(ctx, k.Seal); err != nil {
				return err
			}
			signers.put(it.AccountID, it.AuthorityID, signer)
		}
		cert, err := NewCertificate(signer, pub, kd.certType, it)
		if err != nil {
			return err
		}
		it.Certificate = AuthorizedKey(cert)
		return nil
	}
	f.Create = func(ctx context.Context, r *api.Request, it *Certificate, m *resource.Mutation) (any, error) {
		m.Update("ca", store.ResourceKey(it.AccountID, it.AuthorityID), countBy(1), store.Exists())
		m.Refuse("ca", caNotFound(it.AuthorityID))
		return nil, nil
	}
	f.Update = func(ctx context.Context, r *api.Request, it *Certificate, m *resource.Mutation) error {
		return api.UpdateText(r, certificateTextCodes, &it.Description, &it.Metadata)
	}
	f.Delete = func(ctx context.Context, r *api.Request, it *Certificate, m *resource.Mutation) error {
		m.Update("ca", store.ResourceKey(it.AccountID, it.AuthorityID), countBy(-1),
			store.Exists(), expression.Name(AttrCertificates).GreaterThan(expression.Value(0)))
		return nil
	}
	return f
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

// decodeCertificate validates a create body into it; nothing is read or signed yet.
func decodeCertificate(r *api.Request, kd kind, it *Certificate) (ssh.PublicKey, error) {
	var in userCertificateCreate
	var err error
	if kd.certType == ssh.HostCert {
		err = api.Decode(r, &in.certificateCreate)
	} else {
		err = api.Decode(r, &in)
	}
	if err != nil {
		return nil, err
	}
	if err := api.CheckText(certificateTextCodes, in.Description, in.Metadata); err != nil {
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
	if kd.certType == ssh.UserCert {
		if it.CriticalOptions, err = CriticalOptions(in.CriticalOptions); err != nil {
			return nil, err
		}
		if it.Extensions, err = Extensions(in.Extensions); err != nil {
			return nil, err
		}
	}
	va, vu, err := Validity(in.ValidAfter, in.ValidUntil, time.Now(), kd.validity)
	if err != nil {
		return nil, err
	}
	api.Set(&it.Description, in.Description)
	api.Set(&it.Metadata, in.Metadata)
	it.AuthorityID = *in.SSHCertificateAuthorityID
	it.PublicKey = strings.TrimSpace(*in.PublicKey)
	it.KeyType = keyType
	it.Principals = principals
	it.ValidAfter, it.ValidUntil = va.Unix(), vu.Unix()
	return pub, nil
}

// loadAuthority reads the CA in the same consistent round trip that verifies the caller.
func loadAuthority(ctx context.Context, k *resource.Kit, r *api.Request, id string) (*Authority, error) {
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
	var ca Authority
	if err := store.Unmarshal(items[0], &ca); err != nil {
		return nil, err
	}
	return &ca, nil
}

// NewCertificate signs pub with signer as it describes: type, key id, principals, validity,
// options and extensions. The serial is random, so that a key revocation list can name it.
func NewCertificate(signer ssh.Signer, pub ssh.PublicKey, certType uint32, it *Certificate) (*ssh.Certificate, error) {
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

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// RegisterAuthorities adds the /ssh_certificate_authorities routes.
func RegisterAuthorities(k *resource.Kit, mux api.Mux, s *api.Server) {
	Authorities(k).Register(mux, s)
}

// RegisterUserCertificates adds the /ssh_user_certificates routes.
func RegisterUserCertificates(k *resource.Kit, mux api.Mux, s *api.Server) {
	UserCertificates(k).Register(mux, s)
}

// RegisterHostCertificates adds the /ssh_host_certificates routes.
func RegisterHostCertificates(k *resource.Kit, mux api.Mux, s *api.Server) {
	HostCertificates(k).Register(mux, s)
}
