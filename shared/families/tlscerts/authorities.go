package tlscerts

import (
	"context"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// CertificateAuthority is a stored CA certificate (public material only: no key is uploaded).
type CertificateAuthority struct {
	store.Meta
	Description string `dynamodbav:"description"`
	Metadata    string `dynamodbav:"metadata"`
	CAPEM       string `dynamodbav:"ca_pem"`
	Details
}

// CertificateAuthorityJSON is the wire form of a certificate authority.
type CertificateAuthorityJSON struct {
	ID                string   `json:"id"`
	URI               string   `json:"uri"`
	CreatedAt         string   `json:"created_at"`
	Description       string   `json:"description"`
	Metadata          string   `json:"metadata"`
	CAPEM             string   `json:"ca_pem"`
	SubjectCommonName string   `json:"subject_common_name"`
	NotBefore         string   `json:"not_before"`
	NotAfter          string   `json:"not_after"`
	KeyUsages         []string `json:"key_usages"`
	ExtendedKeyUsages []string `json:"extended_key_usages"`
}

type certificateAuthorityCreate struct {
	Description *string `json:"description"`
	Metadata    *string `json:"metadata"`
	CAPEM       *string `json:"ca_pem"`
}

// CertificateAuthorities returns the /certificate_authorities family.
func CertificateAuthorities(k *resource.Kit) *resource.Family[CertificateAuthority, *CertificateAuthority] {
	f := &resource.Family[CertificateAuthority, *CertificateAuthority]{
		Kit: k, Prefix: ids.CertificateAuthority, Path: "/certificate_authorities", ListKey: "certificate_authorities",
		EventKind: "certificate_authority", Filter: true,
	}
	f.Render = func(r *api.Request, it *CertificateAuthority) any {
		return CertificateAuthorityJSON{
			ID: it.ID, URI: f.URI(r, it.ID), CreatedAt: api.Timestamp(it.CreatedAt),
			Description: it.Description, Metadata: it.Metadata, CAPEM: it.CAPEM,
			SubjectCommonName: it.SubjectCommonName,
			NotBefore:         api.Timestamp(it.NotBefore), NotAfter: api.Timestamp(it.NotAfter),
			KeyUsages: list(it.KeyUsages), ExtendedKeyUsages: list(it.ExtendedKeyUsages),
		}
	}
	f.Prepare = func(ctx context.Context, r *api.Request, it *CertificateAuthority) error {
		var in certificateAuthorityCreate
		if err := api.Decode(r, &in); err != nil {
			return err
		}
		if err := api.CheckText(AuthorityTextCodes, in.Description, in.Metadata); err != nil {
			return err
		}
		if in.CAPEM == nil || *in.CAPEM == "" {
			return api.BadRequest(CodeCANotCert, fieldCAPEM, "ca_pem is required")
		}
		c, err := ParseCA(*in.CAPEM)
		if err != nil {
			return err
		}
		api.Set(&it.Description, in.Description)
		api.Set(&it.Metadata, in.Metadata)
		it.CAPEM = *in.CAPEM
		it.Details = Derive(c)
		return nil
	}
	f.Update = func(ctx context.Context, r *api.Request, it *CertificateAuthority, m *resource.Mutation) error {
		return api.UpdateText(r, AuthorityTextCodes, &it.Description, &it.Metadata)
	}
	return f
}

// RegisterTLSCertificates adds the /tls_certificates routes.
func RegisterTLSCertificates(k *resource.Kit, mux api.Mux, s *api.Server) {
	TLSCertificates(k).Register(mux, s)
}

// RegisterCertificateAuthorities adds the /certificate_authorities routes.
func RegisterCertificateAuthorities(k *resource.Kit, mux api.Mux, s *api.Server) {
	CertificateAuthorities(k).Register(mux, s)
}
