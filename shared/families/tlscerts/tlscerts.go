package tlscerts

import (
	"context"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"
)

// TLSCertificateItem is a stored TLS certificate. PrivateKey is the PKCS#8 DER of the key, sealed
// with the account and id as its context.
type TLSCertificateItem struct {
	store.Meta
	resource.Described
	CertificatePEM string `dynamodbav:"certificate_pem"`
	Details
	PrivateKeyType string      `dynamodbav:"private_key_type"`
	PrivateKey     seal.Sealed `dynamodbav:"private_key"`
	// IssuedAt is when the certificate worker obtained a managed certificate (Unix seconds); 0
	// for an uploaded one.
	IssuedAt int64 `dynamodbav:"issued_at,omitempty"`
}

// SANs is the wire form of a certificate's subject alternative names.
type SANs struct {
	DNSNames []string `json:"dns_names"`
	IPs      []string `json:"ips"`
}

// TLSCertificateJSON is the wire form of a TLS certificate.
type TLSCertificateJSON struct {
	resource.Head
	CertificatePEM            string   `json:"certificate_pem"`
	SubjectCommonName         string   `json:"subject_common_name"`
	SubjectAlternativeNames   SANs     `json:"subject_alternative_names"`
	IssuedAt                  *string  `json:"issued_at"`
	NotBefore                 string   `json:"not_before"`
	NotAfter                  string   `json:"not_after"`
	KeyUsages                 []string `json:"key_usages"`
	ExtendedKeyUsages         []string `json:"extended_key_usages"`
	PrivateKeyType            string   `json:"private_key_type"`
	IssuerCommonName          string   `json:"issuer_common_name"`
	SerialNumber              string   `json:"serial_number"`
	SubjectOrganization       string   `json:"subject_organization"`
	SubjectOrganizationalUnit string   `json:"subject_organizational_unit"`
	SubjectLocality           string   `json:"subject_locality"`
	SubjectProvince           string   `json:"subject_province"`
	SubjectCountry            string   `json:"subject_country"`
}

// Text codes of the certificate families: certificates use the first pair, authorities the
// second.
var (
	// CertificateTextCodes are the over-long description and metadata codes of certificates.
	CertificateTextCodes = api.TextCodes{Description: "ERR_NGROK_1914", Metadata: "ERR_NGROK_1915"}
	// AuthorityTextCodes are the over-long description and metadata codes of authorities.
	AuthorityTextCodes = api.TextCodes{Description: "ERR_NGROK_1916", Metadata: "ERR_NGROK_1917"}
)

type tlsCertificateCreate struct {
	api.Text
	CertificatePEM *string `json:"certificate_pem"`
	PrivateKeyPEM  *string `json:"private_key_pem"`
}

// TLSCertificatesPath and TLSCertificateEventKind are the TLS certificates' collection path and
// audit event kind, for the families that refer to certificates and record events about those
// they manage.
const (
	TLSCertificatesPath     = "/tls_certificates"
	TLSCertificateEventKind = "tls_certificate"
)

// TLSCertificatesDescriptor is the /tls_certificates family.
var TLSCertificatesDescriptor = &resource.Descriptor{
	Path: TLSCertificatesPath, Prefix: ids.TLSCertificate, ListKey: "tls_certificates", EventKind: TLSCertificateEventKind, Filter: true,
	Binding: func() resource.Binding { return resource.Bind(newTLSCertificates).Keeping(resource.Seals) },
}

// TLSCertificates is the TLS certificate family's rules.
type TLSCertificates struct {
	*resource.Family[TLSCertificateItem, *TLSCertificateItem]
	resource.Prepared[*TLSCertificateItem]
}

func newTLSCertificates(f *resource.Family[TLSCertificateItem, *TLSCertificateItem]) TLSCertificates {
	return TLSCertificates{Family: f}
}

// Render returns a TLS certificate as GET returns it; the private key never appears.
func (f TLSCertificates) Render(r *api.Request, it *TLSCertificateItem) any {
	return render(resource.NewHead(r, f.Path, &it.Meta, it.Described), it)
}

// render is the wire form of it with head as its head.
func render(head resource.Head, it *TLSCertificateItem) TLSCertificateJSON {
	d := it.Details
	var issued *string
	if it.IssuedAt != 0 {
		t := api.Timestamp(it.IssuedAt)
		issued = &t
	}
	return TLSCertificateJSON{IssuedAt: issued,
		Head: head, CertificatePEM: it.CertificatePEM,
		SubjectCommonName:       d.SubjectCommonName,
		SubjectAlternativeNames: SANs{DNSNames: api.Slice(d.DNSNames), IPs: api.Slice(d.IPs)},
		NotBefore:               api.Timestamp(d.NotBefore), NotAfter: api.Timestamp(d.NotAfter),
		KeyUsages: api.Slice(d.KeyUsages), ExtendedKeyUsages: api.Slice(d.ExtendedKeyUsages),
		PrivateKeyType: it.PrivateKeyType, IssuerCommonName: d.IssuerCommonName, SerialNumber: d.SerialNumber,
		SubjectOrganization: d.SubjectOrganization, SubjectOrganizationalUnit: d.SubjectOrganizationalUnit,
		SubjectLocality: d.SubjectLocality, SubjectProvince: d.SubjectProvince, SubjectCountry: d.SubjectCountry,
	}
}

// Render returns it as GET /tls_certificates/{id} returns it on r's host: the object of the
// events other families record about certificates they manage.
func Render(r *api.Request, it *TLSCertificateItem) any {
	return render(resource.NewHead(r, TLSCertificatesPath, &it.Meta, it.Described), it)
}

// Prepare parses the chain and key, checks they match and seals the key: once per request,
// outside the transaction's retries.
func (f TLSCertificates) Prepare(ctx context.Context, r *api.Request, it *TLSCertificateItem) error {
	var in tlsCertificateCreate
	if err := it.DecodeCreate(r, CertificateTextCodes, &in); err != nil {
		return err
	}
	if in.CertificatePEM == nil || *in.CertificatePEM == "" {
		return api.BadRequest(CodeBadCertPEM, fieldCertificatePEM, "certificate_pem is required")
	}
	if in.PrivateKeyPEM == nil || *in.PrivateKeyPEM == "" {
		return api.BadRequest(CodeBadKeyPEM, fieldPrivateKeyPEM, "private_key_pem is required")
	}
	chain, err := ParseChain(*in.CertificatePEM)
	if err != nil {
		return err
	}
	key, keyType, err := ParsePrivateKey(*in.PrivateKeyPEM)
	if err != nil {
		return err
	}
	if !Matches(chain[0], key) {
		return api.BadRequest(CodeKeyMismatch, fieldPrivateKeyPEM, "private_key_pem is not the key of the leaf certificate in certificate_pem")
	}
	sealed, err := seal.SealPrivateKey(ctx, f.Kit.Seal, key, it.AccountID, it.ID)
	if err != nil {
		return err
	}
	it.CertificatePEM = *in.CertificatePEM
	it.Details = Derive(chain[0])
	it.PrivateKeyType = keyType
	it.PrivateKey = sealed
	return nil
}

// Update changes description and metadata, the only mutable fields.
func (TLSCertificates) Update(ctx context.Context, r *api.Request, it *TLSCertificateItem, m *resource.Mutation) error {
	return it.UpdateText(r, CertificateTextCodes)
}

// InUse is the refusal to delete a certificate a reserved domain or an agent ingress still
// references: an uploaded certificate a domain names, or a managed certificate its domain or
// ingress holds.
func (TLSCertificates) InUse() *api.Error {
	return api.BadRequest(CodeInUse, "id", "the certificate is used by a reserved domain or an agent ingress; detach it there first "+
		"(DELETE /reserved_domains/{id}/certificate, after detaching its certificate_management_policy for a managed one); "+
		"a managed certificate is also deleted with its domain or ingress")
}
