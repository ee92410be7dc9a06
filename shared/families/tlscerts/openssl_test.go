package tlscerts_test

import (
	"bytes"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"math/big"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/families/tlscerts"
)

// openssl runs the openssl command line in a temporary folder.
type openssl struct {
	t   *testing.T
	dir string
}

func newOpenSSL(t *testing.T) *openssl {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatal("openssl is not installed (infra/tools.sh installs it)")
	}
	return &openssl{t: t, dir: t.TempDir()}
}

// run runs openssl with args and returns its standard output.
func (o *openssl) run(args ...string) string {
	o.t.Helper()
	cmd := exec.Command("openssl", args...)
	cmd.Dir = o.dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		o.t.Fatalf("openssl %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// read returns a file of the folder.
func (o *openssl) read(name string) string {
	o.t.Helper()
	b, err := os.ReadFile(filepath.Join(o.dir, name))
	if err != nil {
		o.t.Fatal(err)
	}
	return string(b)
}

func (o *openssl) write(name, content string) {
	o.t.Helper()
	if err := os.WriteFile(filepath.Join(o.dir, name), []byte(content), 0o600); err != nil {
		o.t.Fatal(err)
	}
}

// key parses the private key in a PEM file (to look for its bytes in stored items).
func (o *openssl) key(name string) any {
	o.t.Helper()
	rest := []byte(o.read(name))
	for {
		b, r := pem.Decode(rest)
		if b == nil {
			o.t.Fatalf("%s holds no private key", name)
		}
		rest = r
		k, err := tlscerts.ParseKeyBlock(b)
		if errors.Is(err, tlscerts.ErrNotKeyBlock) {
			continue
		}
		if err != nil {
			o.t.Fatal(err)
		}
		return k
	}
}

// x509Text is what `openssl x509 -noout -text` reports about a certificate.
type x509Text struct {
	Serial              *big.Int
	Subject, Issuer     map[string]string
	NotBefore, NotAfter time.Time
	KeyAlgorithm        string
	DNS, IPs            []string
	KeyUsage, ExtUsage  []string
}

// text parses `openssl x509 -noout -text` of the certificate in file.
func (o *openssl) text(file string) x509Text {
	o.t.Helper()
	lines := strings.Split(o.run("x509", "-noout", "-text", "-in", file), "\n")
	var x x509Text
	next := func(i int) string {
		if i+1 < len(lines) {
			return strings.TrimSpace(lines[i+1])
		}
		return ""
	}
	for i, raw := range lines {
		l := strings.TrimSpace(raw)
		switch {
		case strings.HasPrefix(l, "Serial Number:"):
			v := strings.TrimSpace(strings.TrimPrefix(l, "Serial Number:"))
			x.Serial = new(big.Int)
			if v == "" { // long serials: colon-separated hex on the next line
				b, err := hex.DecodeString(strings.ReplaceAll(next(i), ":", ""))
				if err != nil {
					o.t.Fatalf("serial %q: %v", next(i), err)
				}
				x.Serial.SetBytes(b)
			} else if _, ok := x.Serial.SetString(strings.Fields(v)[0], 10); !ok {
				o.t.Fatalf("serial %q", v)
			}
		case strings.HasPrefix(l, "Issuer:"):
			x.Issuer = parseDN(strings.TrimPrefix(l, "Issuer:"))
		case strings.HasPrefix(l, "Subject:"):
			x.Subject = parseDN(strings.TrimPrefix(l, "Subject:"))
		case strings.HasPrefix(l, "Not Before:"):
			x.NotBefore = o.parseTime(strings.TrimPrefix(l, "Not Before:"))
		case strings.HasPrefix(l, "Not After :"):
			x.NotAfter = o.parseTime(strings.TrimPrefix(l, "Not After :"))
		case strings.HasPrefix(l, "Public Key Algorithm:"):
			x.KeyAlgorithm = strings.TrimSpace(strings.TrimPrefix(l, "Public Key Algorithm:"))
		case strings.HasPrefix(l, "X509v3 Subject Alternative Name:"):
			for _, san := range strings.Split(next(i), ", ") {
				switch {
				case strings.HasPrefix(san, "DNS:"):
					x.DNS = append(x.DNS, strings.TrimPrefix(san, "DNS:"))
				case strings.HasPrefix(san, "IP Address:"):
					a, err := netip.ParseAddr(strings.TrimPrefix(san, "IP Address:"))
					if err != nil {
						o.t.Fatalf("SAN %q: %v", san, err)
					}
					x.IPs = append(x.IPs, a.String())
				}
			}
		case strings.HasPrefix(l, "X509v3 Key Usage:"):
			for _, u := range strings.Split(next(i), ", ") {
				x.KeyUsage = append(x.KeyUsage, mapped(o.t, opensslKeyUsage, u))
			}
		case strings.HasPrefix(l, "X509v3 Extended Key Usage:"):
			for _, u := range strings.Split(next(i), ", ") {
				if n, ok := opensslExtKeyUsage[u]; ok {
					u = n
				}
				x.ExtUsage = append(x.ExtUsage, u)
			}
		}
	}
	return x
}

func (o *openssl) parseTime(s string) time.Time {
	t, err := time.Parse("Jan _2 15:04:05 2006 MST", strings.TrimSpace(s))
	if err != nil {
		o.t.Fatal(err)
	}
	return t.UTC()
}

// parseDN parses openssl's default one-line name form: "C = US, ST = California, CN = x".
func parseDN(s string) map[string]string {
	out := map[string]string{}
	for _, part := range strings.Split(strings.TrimSpace(s), ", ") {
		if k, v, ok := strings.Cut(part, " = "); ok {
			out[k] = v
		}
	}
	return out
}

func mapped(t *testing.T, m map[string]string, k string) string {
	v, ok := m[k]
	if !ok {
		t.Fatalf("no wire name for openssl's %q", k)
	}
	return v
}

// openssl's names for key usages and extended key usages, and this API's.
var (
	opensslKeyUsage = map[string]string{
		"Digital Signature": "digital_signature", "Non Repudiation": "content_commitment",
		"Key Encipherment": "key_encipherment", "Data Encipherment": "data_encipherment",
		"Key Agreement": "key_agreement", "Certificate Sign": "cert_sign", "CRL Sign": "crl_sign",
		"Encipher Only": "encipher_only", "Decipher Only": "decipher_only",
	}
	opensslExtKeyUsage = map[string]string{
		"TLS Web Server Authentication": "server_auth", "TLS Web Client Authentication": "client_auth",
		"Code Signing": "code_signing", "E-mail Protection": "email_protection", "Time Stamping": "time_stamping",
		"OCSP Signing": "ocsp_signing", "IPSec End System": "ipsec_end_system", "IPSec Tunnel": "ipsec_tunnel",
		"IPSec User": "ipsec_user", "Any Extended Key Usage": "any",
	}
	opensslKeyAlgorithm = map[string]string{"rsaEncryption": "rsa", "id-ecPublicKey": "ecdsa", "ED25519": "ed25519"}
)
