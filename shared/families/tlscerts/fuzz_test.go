package tlscerts_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"tunnelapi/shared/families/tlscerts"
	"tunnelapi/shared/testing/testkit"
)

// seedPEMs returns a chain (leaf, root), the leaf's key in each accepted encoding, and PEM
// shapes that are almost right: the seed corpus of the parsers' fuzz targets.
func seedPEMs(f *testing.F) (chain string, keys []string) {
	rootKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		f.Fatal(err)
	}
	rootTpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "seed root"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<31, 0), BasicConstraintsValid: true, IsCA: true,
		KeyUsage: x509.KeyUsageCertSign}
	rootDER, err := x509.CreateCertificate(rand.Reader, rootTpl, rootTpl, rootKey.Public(), rootKey)
	if err != nil {
		f.Fatal(err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	leafTpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "seed.example.com"},
		DNSNames: []string{"seed.example.com"}, NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<31, 0),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTpl, rootTpl, leafKey.Public(), rootKey)
	if err != nil {
		f.Fatal(err)
	}
	enc := func(typ string, der []byte) string {
		return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
	}
	chain = enc("CERTIFICATE", leafDER) + enc("CERTIFICATE", rootDER)
	sec1, _ := x509.MarshalECPrivateKey(leafKey)
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(leafKey)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	ed8, _ := x509.MarshalPKCS8PrivateKey(edKey)
	keys = []string{enc("EC PRIVATE KEY", sec1), enc("PRIVATE KEY", pkcs8), enc("PRIVATE KEY", ed8),
		enc("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rootKey)), enc("ENCRYPTED PRIVATE KEY", pkcs8),
		"-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,00\n\nAAAA\n-----END EC PRIVATE KEY-----\n"}
	return chain, keys
}

func addMutations(f *testing.F, s string) {
	f.Add(s)
	f.Add(s[:len(s)/2])
	f.Add(s[len(s)/3:])
	f.Add(s + "junk")
	f.Add("junk" + s)
}

func FuzzParseChain(f *testing.F) {
	chain, keys := seedPEMs(f)
	addMutations(f, chain)
	f.Add(keys[0])
	f.Add("")
	f.Add("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := tlscerts.ParseChain(s)
		if !testkit.IsFieldError(err) {
			t.Fatalf("ParseChain error is not a 4xx naming a field: %v", err)
		}
		if err == nil {
			tlscerts.Derive(c[0])
		}
	})
}

func FuzzParsePrivateKey(f *testing.F) {
	chain, keys := seedPEMs(f)
	for _, k := range keys {
		addMutations(f, k)
	}
	f.Add(chain)
	f.Add("-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, _, err := tlscerts.ParsePrivateKey(s)
		if !testkit.IsFieldError(err) {
			t.Fatalf("ParsePrivateKey error is not a 4xx naming a field: %v", err)
		}
	})
}

func FuzzParseCA(f *testing.F) {
	chain, keys := seedPEMs(f)
	addMutations(f, chain)
	addMutations(f, chain[len(chain)/2:])
	f.Add(keys[1])
	f.Fuzz(func(t *testing.T, s string) {
		c, err := tlscerts.ParseCA(s)
		if !testkit.IsFieldError(err) {
			t.Fatalf("ParseCA error is not a 4xx naming a field: %v", err)
		}
		if err == nil {
			tlscerts.Derive(c)
		}
	})
}
