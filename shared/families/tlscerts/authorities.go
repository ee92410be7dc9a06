package tlscerts

import (
	"context"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// CertificateAuthorityItem is a stored CA certificate (public material only: no key is uploaded).
type CertificateAuthorityItem struct {
	store.Meta
	resource.Described
	CAPEM string `dynamodbav:"ca_pem"`
	Details
}

// CertificateAuthorityJSON is the wire form of a certificate authority.
type CertificateAuthorityJSON struct {
	resource.Head
	CAPEM             string   `json:"ca_pem"`
	SubjectCommonName string   `json:"subject_common_name"`
	NotBefore         string   `json:"not_before"`
	NotAfter          string   `json:"not_after"`
	KeyUsages         []string `json:"key_usages"`
	ExtendedKeyUsages []string `json:"extended_key_usages"`
}

type certificateAuthorityCreate struct {
	api.Text
	CAPEM *string `json:"ca_pem"`
}

// CertificateAuthoritiesPath is the certificate authorities' collection path, for references to
// them.
const CertificateAuthoritiesPath = "/certificate_authorities"

// CertificateAuthoritiesDescriptor is the /certificate_authorities family.
var CertificateAuthoritiesDescriptor = &resource.Descriptor{
	Path: CertificateAuthoritiesPath, Prefix: ids.CertificateAuthority, ListKey: "certificate_authorities",
	EventKind: "certificate_authority", Filter: true,
	Binding: func() resource.Binding { return resource.Bind(newCertificateAuthorities) },
}

// CertificateAuthorities is the certificate authority family's rules.
type CertificateAuthorities struct {
	*resource.Family[CertificateAuthorityItem, *CertificateAuthorityItem]
	resource.Prepared[*CertificateAuthorityItem]
}

func newCertificateAuthorities(f *resource.Family[CertificateAuthorityItem, *CertificateAuthorityItem]) CertificateAuthorities {
	return CertificateAuthorities{Family: f}
}

// Render returns a certificate authority as GET returns it.
func (f CertificateAuthorities) Render(r *api.Request, it *CertificateAuthorityItem) any {
	return CertificateAuthorityJSON{
		Head: resource.NewHead(r, f.Path, &it.Meta, it.Described), CAPEM: it.CAPEM,
		SubjectCommonName: it.SubjectCommonName,
		NotBefore:         api.Timestamp(it.NotBefore), NotAfter: api.Timestamp(it.NotAfter),
		KeyUsages: api.Slice(it.KeyUsages), ExtendedKeyUsages: api.Slice(it.ExtendedKeyUsages),
	}
}

// Prepare parses and checks the CA certificate once per request, outside the transaction's
// retries.
func (CertificateAuthorities) Prepare(ctx context.Context, r *api.Request, it *CertificateAuthorityItem) error {
	var in certificateAuthorityCreate
	if err := it.DecodeCreate(r, AuthorityTextCodes, &in); err != nil {
		return err
	}
	if in.CAPEM == nil || *in.CAPEM == "" {
		return api.BadRequest(CodeCANotCert, fieldCAPEM, "ca_pem is required")
	}
	c, err := ParseCA(*in.CAPEM)
	if err != nil {
		return err
	}
	it.CAPEM = *in.CAPEM
	it.Details = Derive(c)
	return nil
}

// Update changes description and metadata, the only mutable fields.
func (CertificateAuthorities) Update(ctx context.Context, r *api.Request, it *CertificateAuthorityItem, m *resource.Mutation) error {
	return it.UpdateText(r, AuthorityTextCodes)
}

// InUse is the refusal to delete a certificate authority an edge's mutual TLS module still
// references (the family's code for a certificate still in use).
func (CertificateAuthorities) InUse() *api.Error {
	return api.BadRequest(CodeInUse, "id", "the certificate authority is still used by an edge's mutual_tls module; remove it there first")
}
