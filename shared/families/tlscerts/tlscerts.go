// Package tlscerts holds the X.509 families: uploaded TLS certificates (a chain and its private
// key, the key sealed at rest and never returned) and certificate authorities (a CA certificate
// for mutual TLS). Every reported field is derived from the certificate at upload.
package tlscerts

import (
	"context"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"

	// Private keys of this family are sealed with KMS in AWS.
	_ "tunnelapi/shared/platform/seal/kmsseal"
)

// TLSCertificate is a stored TLS certificate. PrivateKey is the PKCS#8 DER of the key, sealed
// with the account and id as its context.
type TLSCertificate struct {
	store.Meta
	Description    string `dynamodbav:"description"`
	Metadata       string `dynamodbav:"metadata"`
	CertificatePEM string `dynamodbav:"certificate_pem"`
	Details
	PrivateKeyType string      `dynamodbav:"private_key_type"`
	PrivateKey     seal.Sealed `dynamodbav:"private_key"`
}

// SANs is the wire form of a certificate's subject alternative names.
type SANs struct {
	DNSNames []string `json:"dns_names"`
	IPs      []string `json:"ips"`
}

// TLSCertificateJSON is the wire form of a TLS certificate.
type TLSCertificateJSON struct {
	ID                        string   `json:"id"`
	URI                       string   `json:"uri"`
	CreatedAt                 string   `json:"created_at"`
	Description               string   `json:"description"`
	Metadata                  string   `json:"metadata"`
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

// Text codes of the certificate families (WIRE.md: certs 1914–1917): certificates use the first
// pair, authorities the second.
var (
	// CertificateTextCodes are the over-long description and metadata codes of certificates.
	CertificateTextCodes = api.TextCodes{Description: "ERR_NGROK_1914", Metadata: "ERR_NGROK_1915"}
	// AuthorityTextCodes are the over-long description and metadata codes of authorities.
	AuthorityTextCodes = api.TextCodes{Description: "ERR_NGROK_1916", Metadata: "ERR_NGROK_1917"}
)

type tlsCertificateCreate struct {
	Description    *string `json:"description"`
	Metadata       *string `json:"metadata"`
	CertificatePEM *string `json:"certificate_pem"`
	PrivateKeyPEM  *string `json:"private_key_pem"`
}

// TLSCertificates returns the /tls_certificates family.
func TLSCertificates(k *resource.Kit) *resource.Family[TLSCertificate, *TLSCertificate] {
	f := &resource.Family[TLSCertificate, *TLSCertificate]{
		Kit: k, Prefix: ids.TLSCertificate, Path: "/tls_certificates", ListKey: "tls_certificates",
		EventKind: "tls_certificate", Filter: true,
	}
	f.Render = func(r *api.Request, it *TLSCertificate) any {
		d := it.Details
		return TLSCertificateJSON{
			ID: it.ID, URI: f.URI(r, it.ID), CreatedAt: api.Timestamp(it.CreatedAt),
			Description: it.Description, Metadata: it.Metadata, CertificatePEM: it.CertificatePEM,
			SubjectCommonName:       d.SubjectCommonName,
			SubjectAlternativeNames: SANs{DNSNames: list(d.DNSNames), IPs: list(d.IPs)},
			NotBefore:               api.Timestamp(d.NotBefore), NotAfter: api.Timestamp(d.NotAfter),
			KeyUsages: list(d.KeyUsages), ExtendedKeyUsages: list(d.ExtendedKeyUsages),
			PrivateKeyType: it.PrivateKeyType, IssuerCommonName: d.IssuerCommonName, SerialNumber: d.SerialNumber,
			SubjectOrganization: d.SubjectOrganization, SubjectOrganizationalUnit: d.SubjectOrganizationalUnit,
			SubjectLocality: d.SubjectLocality, SubjectProvince: d.SubjectProvince, SubjectCountry: d.SubjectCountry,
		}
	}
	// Parsing and sealing run once, outside the transaction's retries.
	f.Prepare = func(ctx context.Context, r *api.Request, it *TLSCertificate) error {
		var in tlsCertificateCreate
		if err := api.Decode(r, &in); err != nil {
			return err
		}
		if err := api.CheckText(CertificateTextCodes, in.Description, in.Metadata); err != nil {
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
		sealed, err := seal.SealPrivateKey(ctx, k.Seal, key, it.AccountID, it.ID)
		if err != nil {
			return err
		}
		api.Set(&it.Description, in.Description)
		api.Set(&it.Metadata, in.Metadata)
		it.CertificatePEM = *in.CertificatePEM
		it.Details = Derive(chain[0])
		it.PrivateKeyType = keyType
		it.PrivateKey = sealed
		return nil
	}
	f.Update = func(ctx context.Context, r *api.Request, it *TLSCertificate, m *resource.Mutation) error {
		return api.UpdateText(r, CertificateTextCodes, &it.Description, &it.Metadata)
	}
	return f
}

// list returns v, or an empty list for nil, so that JSON shows [] rather than null.
func list(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}
