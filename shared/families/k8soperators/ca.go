package k8soperators

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"
)

// certValidity is how long a binding certificate is valid from its signing; caValidity how long
// an account's operator CA is.
const (
	certValidity = 365 * 24 * time.Hour
	caValidity   = 20 * 365 * 24 * time.Hour
)

// maxCSRBytes bounds a binding's CSR, a few hundred bytes for an EC key.
const maxCSRBytes = 16 << 10

// CASealID is the id an account's operator CA key is sealed under (with the account).
const CASealID = "kubernetes_operator_ca"

const fieldCSR = "binding.csr"

// ParseCSR parses a PEM certificate signing request and checks its signature and key: RSA of
// 2048 bits or more, ECDSA on P-256, P-384 or P-521, or Ed25519. Any failure is a 400 naming
// binding.csr.
func ParseCSR(s string) (*x509.CertificateRequest, error) {
	bad := func(format string, args ...any) (*x509.CertificateRequest, error) {
		return nil, api.Invalid(fieldCSR, fieldCSR+" "+format, args...)
	}
	if len(s) > maxCSRBytes {
		return bad("is %d bytes, more than %d", len(s), maxCSRBytes)
	}
	block, rest := pem.Decode([]byte(s))
	if block == nil || (block.Type != "CERTIFICATE REQUEST" && block.Type != "NEW CERTIFICATE REQUEST") {
		return bad("is not a PEM certificate request (-----BEGIN CERTIFICATE REQUEST-----)")
	}
	if len(strings.TrimSpace(string(rest))) > 0 {
		return bad("holds more than one PEM block")
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return bad("does not parse: %s", err.Error())
	}
	if err := csr.CheckSignature(); err != nil {
		return bad("has a signature that does not verify: %s", err.Error())
	}
	switch k := csr.PublicKey.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return bad("has an RSA key of %d bits: at least 2048 are required", k.N.BitLen())
		}
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256(), elliptic.P384(), elliptic.P521():
		default:
			return bad("has an ECDSA key on %s: only P-256, P-384 and P-521 are accepted", k.Curve.Params().Name)
		}
	case ed25519.PublicKey:
	default:
		return bad("has a %T key: only RSA, ECDSA and Ed25519 are accepted", k)
	}
	return csr, nil
}

// authorityItem is an account's operator CA: its self-signed certificate (DER) and its sealed
// PKCS#8 key.
type authorityItem struct {
	store.Key
	Cert       []byte      `dynamodbav:"cert"`
	PrivateKey seal.Sealed `dynamodbav:"private_key"`
	Created    int64       `dynamodbav:"created"`
}

// authority is an opened operator CA.
type authority struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// loadCA returns account's operator CA, made (and stored, sealed) on first use. Two requests
// making it at once both try a conditional put; the one that loses reads the winner's.
func loadCA(ctx context.Context, k *resource.Kit, account string) (_ *authority, err error) {
	defer derrors.Wrap(&err, "k8soperators.loadCA(%s)", account)
	key := store.OperatorCAKey(account)
	for range 2 {
		var it authorityItem
		err := k.DB.Get(ctx, key, &it)
		if err == nil {
			return openCA(ctx, k.Seal, account, &it)
		}
		if !store.IsNotFound(err) {
			return nil, err
		}
		made, err := newCA(ctx, k.Seal, account, key)
		if err != nil {
			return nil, err
		}
		tx := &store.Tx{}
		tx.Put("ca", made.item, store.Absent())
		err = k.DB.Commit(ctx, tx)
		if err == nil {
			return made.authority, nil
		}
		if !store.ConditionFailed(err, "ca") && !store.IsConflict(err) {
			return nil, err
		}
	}
	return nil, errors.New("the operator CA was neither readable nor creatable")
}

func openCA(ctx context.Context, s seal.Sealer, account string, it *authorityItem) (*authority, error) {
	cert, err := x509.ParseCertificate(it.Cert)
	if err != nil {
		return nil, fmt.Errorf("the stored operator CA certificate: %w", err)
	}
	key, err := seal.OpenPrivateKey(ctx, s, it.PrivateKey, account, CASealID)
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, errors.New("the stored operator CA key is not a signing key")
	}
	return &authority{cert: cert, key: signer}, nil
}

// madeCA is a fresh CA and the item that stores it.
type madeCA struct {
	*authority
	item authorityItem
}

func newCA(ctx context.Context, s seal.Sealer, account string, key store.Key) (*madeCA, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tpl := &x509.Certificate{
		SerialNumber: randomSerial(), Subject: pkix.Name{CommonName: "Kubernetes operators of " + account},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(caValidity),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign, BasicConstraintsValid: true, IsCA: true, MaxPathLenZero: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, priv.Public(), priv)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	sealed, err := seal.SealPrivateKey(ctx, s, priv, account, CASealID)
	if err != nil {
		return nil, err
	}
	return &madeCA{authority: &authority{cert: cert, key: priv},
		item: authorityItem{Key: key, Cert: der, PrivateKey: sealed, Created: now.Unix()}}, nil
}

// sign issues the operator id's client certificate for csr's key, valid from now for
// certValidity, and returns it as PEM. The subject is the operator's id, whatever the CSR asks.
func (a *authority) sign(csr *x509.CertificateRequest, id string, now time.Time) (string, error) {
	tpl := &x509.Certificate{
		SerialNumber: randomSerial(), Subject: pkix.Name{CommonName: id},
		NotBefore: time.Unix(now.Unix(), 0), NotAfter: time.Unix(now.Add(certValidity).Unix(), 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, a.cert, csr.PublicKey, a.key)
	if err != nil {
		return "", fmt.Errorf("sign the binding certificate: %w", err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), nil
}

// randomSerial is a random positive 128-bit serial number.
func randomSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		panic("k8soperators: entropy source failed: " + err.Error())
	}
	return n.Add(n, big.NewInt(1))
}
