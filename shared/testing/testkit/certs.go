package testkit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"
)

// NewKey returns a fresh P-256 key for a test certificate (fast, unlike RSA).
func NewKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// CertPEM returns the certificate tpl signed by key itself, PEM encoded. A zero serial number
// or validity in tpl becomes a fresh serial and the hour around now.
func CertPEM(t testing.TB, tpl *x509.Certificate, key *ecdsa.PrivateKey) string {
	t.Helper()
	if tpl.SerialNumber == nil {
		tpl.SerialNumber = big.NewInt(time.Now().UnixNano())
	}
	if tpl.NotBefore.IsZero() {
		tpl.NotBefore, tpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// KeyPEM returns key as a PKCS#8 PEM block, the form uploads take.
func KeyPEM(t testing.TB, key *ecdsa.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// SelfSigned returns a new key and the certificate tpl signed by it (see CertPEM), both PEM
// encoded, and the key itself for a test that records it among its needles.
func SelfSigned(t testing.TB, tpl *x509.Certificate) (certPEM, keyPEM string, key *ecdsa.PrivateKey) {
	t.Helper()
	key = NewKey(t)
	return CertPEM(t, tpl, key), KeyPEM(t, key), key
}

// CSRPEM returns a PEM certificate request of a fresh P-256 key, as the Kubernetes operator
// sends to have its binding certificate signed.
func CSRPEM(t testing.TB) string {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "ngrok-operator"}}, NewKey(t))
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}
