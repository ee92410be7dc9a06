package tlscerts

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"net/netip"
	"strings"

	"tunnelapi/shared/platform/api"
)

// Family error codes, as the ngrok API uses them.
const (
	CodeBadCertPEM   = "ERR_NGROK_1900"
	CodeBadKeyPEM    = "ERR_NGROK_1903"
	CodeEncryptedKey = "ERR_NGROK_1902"
	CodeCANotCert    = "ERR_NGROK_1911"
	CodeCAMultiple   = "ERR_NGROK_1912"
	CodeCANotCA      = "ERR_NGROK_1913"
	CodeKeyMismatch  = "ERR_NGROK_1923"
	// CodeInUse refuses deleting a certificate a reserved domain uses (the platform's code for a
	// certificate a managed policy holds).
	CodeInUse           = "ERR_NGROK_1966"
	fieldCertificatePEM = "certificate_pem"
	fieldPrivateKeyPEM  = "private_key_pem"
	fieldCAPEM          = "ca_pem"
)

// Bounds on uploads, so that a hostile body cannot make parsing or key validation expensive.
const (
	maxChainCerts = 10
	// maxPEM keeps a certificate item (its PEM and the names derived from it) and the audit
	// event that repeats both inside DynamoDB's 400 KB item limit; real chains are a few KB.
	maxPEM = 128 << 10
	// maxKeyDER admits RSA keys up to 8192 bits in any of the accepted encodings.
	maxKeyDER = 6 << 10
)

// Details are the fields the API derives from a certificate (the leaf of a chain).
type Details struct {
	SubjectCommonName         string   `dynamodbav:"subject_cn"`
	SubjectOrganization       string   `dynamodbav:"subject_o"`
	SubjectOrganizationalUnit string   `dynamodbav:"subject_ou"`
	SubjectLocality           string   `dynamodbav:"subject_l"`
	SubjectProvince           string   `dynamodbav:"subject_st"`
	SubjectCountry            string   `dynamodbav:"subject_c"`
	IssuerCommonName          string   `dynamodbav:"issuer_cn"`
	SerialNumber              string   `dynamodbav:"serial"`
	NotBefore                 int64    `dynamodbav:"not_before"`
	NotAfter                  int64    `dynamodbav:"not_after"`
	DNSNames                  []string `dynamodbav:"dns_names"`
	IPs                       []string `dynamodbav:"ips"`
	KeyUsages                 []string `dynamodbav:"key_usages"`
	ExtendedKeyUsages         []string `dynamodbav:"ext_key_usages"`
}

// Derive reads the reported fields off a parsed certificate.
func Derive(c *x509.Certificate) Details {
	d := Details{
		SubjectCommonName:         c.Subject.CommonName,
		SubjectOrganization:       first(c.Subject.Organization),
		SubjectOrganizationalUnit: first(c.Subject.OrganizationalUnit),
		SubjectLocality:           first(c.Subject.Locality),
		SubjectProvince:           first(c.Subject.Province),
		SubjectCountry:            first(c.Subject.Country),
		IssuerCommonName:          c.Issuer.CommonName,
		SerialNumber:              serialHex(c),
		NotBefore:                 c.NotBefore.Unix(),
		NotAfter:                  c.NotAfter.Unix(),
		DNSNames:                  append([]string{}, c.DNSNames...),
		IPs:                       make([]string, 0, len(c.IPAddresses)),
		KeyUsages:                 KeyUsageNames(c.KeyUsage),
		ExtendedKeyUsages:         ExtKeyUsageNames(c),
	}
	for _, ip := range c.IPAddresses {
		if a, ok := netip.AddrFromSlice(ip); ok {
			d.IPs = append(d.IPs, a.Unmap().String())
		}
	}
	return d
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// serialHex is the serial number's magnitude as lowercase hex without colons, two digits per
// byte as `openssl x509 -serial` prints it.
func serialHex(c *x509.Certificate) string {
	if c.SerialNumber == nil {
		return ""
	}
	b := c.SerialNumber.Bytes()
	if len(b) == 0 {
		return "00"
	}
	s := hex.EncodeToString(b)
	if c.SerialNumber.Sign() < 0 {
		return "-" + s
	}
	return s
}

// keyUsageNames are the stable wire names of the key usage bits, in bit order.
var keyUsageNames = []struct {
	bit  x509.KeyUsage
	name string
}{
	{x509.KeyUsageDigitalSignature, "digital_signature"},
	{x509.KeyUsageContentCommitment, "content_commitment"},
	{x509.KeyUsageKeyEncipherment, "key_encipherment"},
	{x509.KeyUsageDataEncipherment, "data_encipherment"},
	{x509.KeyUsageKeyAgreement, "key_agreement"},
	{x509.KeyUsageCertSign, "cert_sign"},
	{x509.KeyUsageCRLSign, "crl_sign"},
	{x509.KeyUsageEncipherOnly, "encipher_only"},
	{x509.KeyUsageDecipherOnly, "decipher_only"},
}

// KeyUsageNames lists the names of the bits set in ku, in bit order.
func KeyUsageNames(ku x509.KeyUsage) []string {
	out := []string{}
	for _, n := range keyUsageNames {
		if ku&n.bit != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// extKeyUsageNames are the stable wire names of the extended key usages Go recognises, by
// usage: static data, where a map would be built at every start.
var extKeyUsageNames = [...]string{
	x509.ExtKeyUsageAny:                            "any",
	x509.ExtKeyUsageServerAuth:                     "server_auth",
	x509.ExtKeyUsageClientAuth:                     "client_auth",
	x509.ExtKeyUsageCodeSigning:                    "code_signing",
	x509.ExtKeyUsageEmailProtection:                "email_protection",
	x509.ExtKeyUsageIPSECEndSystem:                 "ipsec_end_system",
	x509.ExtKeyUsageIPSECTunnel:                    "ipsec_tunnel",
	x509.ExtKeyUsageIPSECUser:                      "ipsec_user",
	x509.ExtKeyUsageTimeStamping:                   "time_stamping",
	x509.ExtKeyUsageOCSPSigning:                    "ocsp_signing",
	x509.ExtKeyUsageMicrosoftServerGatedCrypto:     "microsoft_server_gated_crypto",
	x509.ExtKeyUsageNetscapeServerGatedCrypto:      "netscape_server_gated_crypto",
	x509.ExtKeyUsageMicrosoftCommercialCodeSigning: "microsoft_commercial_code_signing",
	x509.ExtKeyUsageMicrosoftKernelCodeSigning:     "microsoft_kernel_code_signing",
}

// ExtKeyUsageNames lists the certificate's extended key usages in certificate order; usages
// without a name are reported by their dotted OID.
func ExtKeyUsageNames(c *x509.Certificate) []string {
	out := []string{}
	for _, u := range c.ExtKeyUsage {
		if u >= 0 && int(u) < len(extKeyUsageNames) && extKeyUsageNames[u] != "" {
			out = append(out, extKeyUsageNames[u])
		}
	}
	for _, oid := range c.UnknownExtKeyUsage {
		out = append(out, oid.String())
	}
	return out
}

// ParseChain parses a PEM chain of certificates, leaf first, each issued by the next. Anything
// else in the text (another block type, stray bytes, a truncated block) is refused with 1900.
func ParseChain(text string) ([]*x509.Certificate, error) {
	bad := func(format string, args ...any) error {
		return api.BadRequest(CodeBadCertPEM, fieldCertificatePEM, format, args...)
	}
	if len(text) > maxPEM {
		return nil, bad("certificate_pem is %d bytes long; the limit is %d bytes", len(text), maxPEM)
	}
	blocks, err := pemBlocks(text)
	if err != nil {
		return nil, bad("certificate_pem is not valid PEM: %s", err.Error())
	}
	if len(blocks) == 0 {
		return nil, bad("certificate_pem holds no PEM-encoded certificate")
	}
	if len(blocks) > maxChainCerts {
		return nil, bad("certificate_pem holds %d certificates; at most %d are accepted", len(blocks), maxChainCerts)
	}
	chain := make([]*x509.Certificate, 0, len(blocks))
	for i, b := range blocks {
		if b.Type != "CERTIFICATE" {
			return nil, bad("certificate_pem block %d is %s; only CERTIFICATE blocks belong in a chain", i+1, blockKind(b.Type))
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, bad("certificate_pem block %d is not a valid X.509 certificate", i+1)
		}
		chain = append(chain, c)
	}
	for i := 0; i+1 < len(chain); i++ {
		if !issuedBy(chain[i], chain[i+1]) {
			return nil, bad("certificate %d of certificate_pem is not issued by certificate %d: the chain must be in order, leaf first", i+1, i+2)
		}
	}
	return chain, nil
}

// issuedBy reports whether parent's subject names child's issuer and its key signed child.
// A signature made with an algorithm Go no longer verifies (SHA-1) is judged by names alone:
// order, not trust, is what is checked here.
func issuedBy(child, parent *x509.Certificate) bool {
	if !bytes.Equal(child.RawIssuer, parent.RawSubject) {
		return false
	}
	err := child.CheckSignatureFrom(parent)
	var insecure x509.InsecureAlgorithmError
	return err == nil || errors.As(err, &insecure)
}

// ParsePrivateKey parses one PEM private key: PKCS#1 (RSA), SEC1 (EC) or PKCS#8 (RSA, ECDSA or
// Ed25519). An "EC PARAMETERS" block before an EC key, as openssl writes it, is skipped.
// It returns the key and its type name (rsa, ecdsa, ed25519).
func ParsePrivateKey(text string) (crypto.Signer, string, error) {
	bad := func(format string, args ...any) error {
		return api.BadRequest(CodeBadKeyPEM, fieldPrivateKeyPEM, format, args...)
	}
	if len(text) > maxPEM {
		return nil, "", bad("private_key_pem is %d bytes long; the limit is %d bytes", len(text), maxPEM)
	}
	blocks, err := pemBlocks(text)
	if err != nil {
		return nil, "", bad("private_key_pem is not valid PEM: %s", err.Error())
	}
	var key *pem.Block
	for _, b := range blocks {
		if b.Type == "EC PARAMETERS" {
			continue
		}
		if b.Type == "ENCRYPTED PRIVATE KEY" || strings.Contains(b.Headers["Proc-Type"], "ENCRYPTED") {
			return nil, "", api.BadRequest(CodeEncryptedKey, fieldPrivateKeyPEM, "private_key_pem is encrypted; upload the key without a passphrase")
		}
		if key != nil {
			return nil, "", bad("private_key_pem must hold exactly one private key")
		}
		key = b
	}
	if key == nil {
		return nil, "", bad("private_key_pem holds no PEM-encoded private key")
	}
	if len(key.Bytes) > maxKeyDER {
		return nil, "", bad("private_key_pem holds a key of %d bytes; keys larger than RSA 8192 are not accepted", len(key.Bytes))
	}
	parsed, err := ParseKeyBlock(key)
	if errors.Is(err, ErrNotKeyBlock) {
		return nil, "", bad("private_key_pem is %s; expected a PKCS#1 (RSA), SEC1 (EC) or PKCS#8 private key", blockKind(key.Type))
	}
	if err != nil {
		return nil, "", bad("private_key_pem does not hold a valid %s private key", keyFormat(key.Type))
	}
	switch k := parsed.(type) {
	case *rsa.PrivateKey:
		return k, "rsa", nil
	case *ecdsa.PrivateKey:
		return k, "ecdsa", nil
	case ed25519.PrivateKey:
		return k, "ed25519", nil
	default:
		return nil, "", bad("private_key_pem holds an unsupported key type; use RSA, ECDSA or Ed25519")
	}
}

// keyFormat names the encoding of a key block type accepted.
func keyFormat(blockType string) string {
	switch blockType {
	case "RSA PRIVATE KEY":
		return "PKCS#1"
	case "EC PRIVATE KEY":
		return "SEC1"
	case "PRIVATE KEY":
		return "PKCS#8"
	}
	return ""
}

// blockKind describes a PEM block type for an error message. Private key block types are not
// echoed: a response never carries a private-key marker, even in a message.
func blockKind(typ string) string {
	if strings.Contains(typ, "PRIVATE KEY") {
		return "a private key"
	}
	return "a " + api.Describe(typ) + " block"
}

// Matches reports whether key is the private half of the certificate's public key.
func Matches(c *x509.Certificate, key crypto.Signer) bool {
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	return ok && pub.Equal(c.PublicKey)
}

// ParseCA parses a certificate authority upload: exactly one CERTIFICATE block (1911 when
// there is none or another kind of block, 1912 for more than one) that is a CA (1913).
func ParseCA(text string) (*x509.Certificate, error) {
	if len(text) > maxPEM {
		return nil, api.BadRequest(CodeCANotCert, fieldCAPEM, "ca_pem is %d bytes long; the limit is %d bytes", len(text), maxPEM)
	}
	blocks, err := pemBlocks(text)
	if err != nil {
		return nil, api.BadRequest(CodeCANotCert, fieldCAPEM, "ca_pem is not valid PEM: %s", err.Error())
	}
	var cert *pem.Block
	for i, b := range blocks {
		if b.Type != "CERTIFICATE" {
			return nil, api.BadRequest(CodeCANotCert, fieldCAPEM, "ca_pem block %d is %s; it must hold one CERTIFICATE block", i+1, blockKind(b.Type))
		}
		if cert != nil {
			return nil, api.BadRequest(CodeCAMultiple, fieldCAPEM, "ca_pem holds more than one certificate; upload each certificate authority separately")
		}
		cert = b
	}
	if cert == nil {
		return nil, api.BadRequest(CodeCANotCert, fieldCAPEM, "ca_pem holds no PEM-encoded CERTIFICATE block")
	}
	c, err := x509.ParseCertificate(cert.Bytes)
	if err != nil {
		return nil, api.BadRequest(CodeCANotCert, fieldCAPEM, "ca_pem is not a valid X.509 certificate")
	}
	if !c.BasicConstraintsValid || !c.IsCA {
		return nil, api.BadRequest(CodeCANotCA, fieldCAPEM, "ca_pem is not a certificate authority: it lacks the CA:TRUE basic constraint")
	}
	return c, nil
}

// errBroken reports a block cut short or otherwise malformed.
var errBroken = errors.New("it holds a truncated or malformed PEM block")

// pemBlocks splits text into PEM blocks. Explanatory text around blocks is allowed (RFC 7468;
// openssl writes "Bag Attributes" and subject lines there), but a block marker outside a
// well-formed block is an error, so that a truncated upload is refused rather than silently
// shortened.
func pemBlocks(text string) ([]*pem.Block, error) {
	begin, end := []byte("-----BEGIN"), []byte("-----END")
	rest := []byte(text)
	var out []*pem.Block
	for {
		b, r := pem.Decode(rest)
		if b == nil {
			if bytes.Contains(rest, begin) || bytes.Contains(rest, end) {
				return nil, errBroken
			}
			return out, nil
		}
		// pem.Decode skips whatever precedes the block it returns, including broken blocks.
		consumed := rest[:len(rest)-len(r)]
		skipped := consumed[:bytes.LastIndex(consumed, begin)]
		if bytes.Contains(skipped, begin) || bytes.Contains(skipped, end) {
			return nil, errBroken
		}
		out = append(out, b)
		rest = r
	}
}

// ErrNotKeyBlock is ParseKeyBlock's error for a PEM block that is not a private key.
var ErrNotKeyBlock = errors.New("tlscerts: not a PKCS#1, SEC1 or PKCS#8 private key block")

// ParseKeyBlock parses a PKCS#1 (RSA), SEC1 (EC) or PKCS#8 private key block.
func ParseKeyBlock(b *pem.Block) (any, error) {
	switch b.Type {
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(b.Bytes)
	case "PRIVATE KEY":
		return x509.ParsePKCS8PrivateKey(b.Bytes)
	}
	return nil, ErrNotKeyBlock
}
