package tlscerts_test

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"tunnelapi/shared/families/tlscerts"
	"tunnelapi/shared/testing/testkit"
)

// Collection paths, from the descriptors.
var (
	pathTLS = tlscerts.TLSCertificatesDescriptor.Path
	pathCAs = tlscerts.CertificateAuthoritiesDescriptor.Path
)

// suite is the package's stack and the private keys it uploaded, in every form they could leak
// in; the uploaded keys are stored (sealed) in private_key.
var suite = testkit.SecretSuite{Sealed: "private_key"}

// TestMain runs the suite, then checks that no private key it uploaded is anywhere in the table
// or in a log line, in PEM, DER, base64 or hex, and that keys were stored (sealed) at all.
func TestMain(m *testing.M) { suite.Main(m, nil) }

// goCert makes a certificate and key in Go (faster than openssl, for the conformance suite).
func goCert(t *testing.T, ca bool) (certPEM, keyPEM string) {
	certPEM, keyPEM, key := testkit.SelfSigned(t, &x509.Certificate{SerialNumber: big.NewInt(42),
		Subject: pkix.Name{CommonName: "conformance.example.com"}, BasicConstraintsValid: true, IsCA: ca})
	suite.Needles.AddKey("go key", key)
	return certPEM, keyPEM
}

func TestTLSCertificatesConformance(t *testing.T) {
	s := suite.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: tlscerts.TLSCertificatesDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			c, k := goCert(t, false)
			return map[string]any{"certificate_pem": c, "private_key_pem": k, "metadata": "m"}
		},
		Update:      map[string]any{"description": "renamed"},
		UpdateWants: map[string]any{"description": "renamed", "metadata": "m"},
		// Prepare (KMS) runs only for a verified caller: one read of the caller's items before
		// the transaction.
		RoundTrips: map[string]map[string]int{"create": {"BatchGetItem": 1, "TransactWriteItems": 1}},
	})
}

func TestCertificateAuthoritiesConformance(t *testing.T) {
	s := suite.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: tlscerts.CertificateAuthoritiesDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			c, _ := goCert(t, true)
			return map[string]any{"ca_pem": c, "description": "mtls"}
		},
		Update:      map[string]any{"metadata": `{"team":"edge"}`},
		UpdateWants: map[string]any{"description": "mtls", "metadata": `{"team":"edge"}`},
	})
}

var rfc3339 = "2006-01-02T15:04:05Z"

// TestUploadsMatchOpenSSL uploads certificates made by openssl and compares every derived field
// with what `openssl x509 -noout -text` reports.
func TestUploadsMatchOpenSSL(t *testing.T) {
	_, a := suite.AppAccount(t)
	const fullSubject = "/C=US/ST=California/L=San Francisco/O=Acme Inc/OU=Edge/CN=www.example.com"
	cases := []struct {
		name    string
		keygen  []string // writes k.pem
		subject string
		exts    []string
		chain   bool // the leaf is issued by a root made here; the upload is leaf then root
		expired bool // issued by `openssl ca` for January 2020 (implies chain)
	}{
		{"rsa pkcs1 with sans and usages", []string{"genrsa", "-traditional", "-out", "k.pem", "2048"}, fullSubject,
			[]string{"subjectAltName=DNS:www.example.com,DNS:*.example.com,IP:10.0.0.1,IP:2001:db8::1",
				"keyUsage=critical,digitalSignature,keyEncipherment", "extendedKeyUsage=serverAuth,clientAuth",
				"basicConstraints=critical,CA:FALSE"}, false, false},
		{"ecdsa p256 sec1 after ec parameters, common name only", []string{"ecparam", "-name", "prime256v1", "-genkey", "-out", "k.pem"},
			"/CN=p256.example.com", nil, false, false},
		{"ecdsa p384 pkcs8 with ip sans and many usages", []string{"genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", "k.pem"},
			"/O=Acme Inc/CN=10.1.2.3",
			[]string{"subjectAltName=IP:10.1.2.3,IP:fd00::5", "keyUsage=digitalSignature,nonRepudiation,keyAgreement",
				"extendedKeyUsage=serverAuth,codeSigning,emailProtection,timeStamping,OCSPSigning,1.2.3.4"}, false, false},
		{"ed25519 leaf in a two-certificate chain", []string{"genpkey", "-algorithm", "ed25519", "-out", "k.pem"},
			"/C=DE/L=Berlin/CN=chain.example.com", []string{"subjectAltName=DNS:chain.example.com", "extendedKeyUsage=serverAuth"}, true, false},
		{"expired rsa pkcs8", []string{"genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "k.pem"},
			"/CN=old.example.com", nil, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := newOpenSSL(t)
			o.run(c.keygen...)
			suite.Needles.AddKey(c.name, o.key("k.pem"))
			upload := ""
			switch {
			case c.expired:
				root(o)
				o.write("ca.cnf", caConfig)
				o.write("index.txt", "")
				o.write("serial", "1000\n")
				o.run("req", "-new", "-key", "k.pem", "-subj", c.subject, "-out", "leaf.csr")
				o.run("ca", "-batch", "-config", "ca.cnf", "-cert", "root.pem", "-keyfile", "root.key", "-notext",
					"-startdate", "20200101000000Z", "-enddate", "20200201000000Z", "-in", "leaf.csr", "-out", "c.pem")
				upload = o.read("c.pem") + o.read("root.pem")
			case c.chain:
				root(o)
				o.write("ext.cnf", strings.Join(c.exts, "\n")+"\n")
				o.run("req", "-new", "-key", "k.pem", "-subj", c.subject, "-out", "leaf.csr")
				o.run("x509", "-req", "-in", "leaf.csr", "-CA", "root.pem", "-CAkey", "root.key", "-days", "30",
					"-set_serial", "0x8000000000000001", "-extfile", "ext.cnf", "-out", "c.pem")
				upload = o.read("c.pem") + o.read("root.pem")
			default:
				args := []string{"req", "-x509", "-key", "k.pem", "-subj", c.subject, "-days", "30", "-out", "c.pem"}
				for _, e := range c.exts {
					args = append(args, "-addext", e)
				}
				o.run(args...)
				upload = o.read("c.pem")
			}
			res := a.Do(t, "POST", pathTLS, map[string]any{"certificate_pem": upload, "private_key_pem": o.read("k.pem")})
			suite.Needles.AssertAbsent(t, res.Body)
			got := res.Expect(t, http.StatusCreated)
			x := o.text("c.pem")
			want := map[string]any{
				"certificate_pem":             upload,
				"subject_common_name":         x.Subject["CN"],
				"subject_organization":        x.Subject["O"],
				"subject_organizational_unit": x.Subject["OU"],
				"subject_locality":            x.Subject["L"],
				"subject_province":            x.Subject["ST"],
				"subject_country":             x.Subject["C"],
				"issuer_common_name":          x.Issuer["CN"],
				"not_before":                  x.NotBefore.Format(rfc3339),
				"not_after":                   x.NotAfter.Format(rfc3339),
				"private_key_type":            opensslKeyAlgorithm[x.KeyAlgorithm],
				"issued_at":                   nil,
				"key_usages":                  strs(x.KeyUsage),
				"extended_key_usages":         strs(x.ExtUsage),
				"subject_alternative_names":   map[string]any{"dns_names": strs(x.DNS), "ips": strs(x.IPs)},
			}
			for k, v := range want {
				if g, ok := got[k]; !ok || !reflect.DeepEqual(g, v) {
					t.Errorf("%s = %#v, openssl says %#v", k, got[k], v)
				}
			}
			serial, _ := got["serial_number"].(string)
			if !regexp.MustCompile(`^([0-9a-f]{2})+$`).MatchString(serial) {
				t.Errorf("serial_number %q is not lowercase hex without colons", serial)
			}
			if n, ok := new(big.Int).SetString(serial, 16); !ok || n.Cmp(x.Serial) != 0 {
				t.Errorf("serial_number %s, openssl says %x", serial, x.Serial)
			}
			if _, ok := got["private_key_pem"]; ok {
				t.Error("the private key is returned")
			}
			again := a.Do(t, "GET", pathTLS+"/"+got["id"].(string), nil)
			suite.Needles.AssertAbsent(t, again.Body)
			if g := again.Expect(t, http.StatusOK); !reflect.DeepEqual(g, got) {
				t.Errorf("GET differs from create:\n%v\n%v", g, got)
			}
		})
	}
}

// strs is v as JSON decodes a list of strings ([] for none).
func strs(v []string) []any {
	out := []any{}
	for _, s := range v {
		out = append(out, s)
	}
	return out
}

// root makes a self-signed RSA root CA (root.pem, root.key) in o's folder.
func root(o *openssl) {
	o.run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "root.key", "-out", "root.pem", "-days", "30", "-subj", "/CN=Test Root CA")
	suite.Needles.AddKey("root", o.key("root.key"))
}

// caConfig is the smallest `openssl ca` configuration that signs with arbitrary dates.
const caConfig = `[ ca ]
default_ca = d
[ d ]
database = index.txt
new_certs_dir = .
serial = serial
default_md = sha256
policy = p
unique_subject = no
[ p ]
commonName = supplied
`

// TestBadUploadsStoreNothing sends malformed, mismatched, encrypted and truncated inputs: each
// gets its code naming the field, and nothing is stored.
func TestBadUploadsStoreNothing(t *testing.T) {
	_, a := suite.AppAccount(t)
	o := newOpenSSL(t)
	o.run("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "k.pem")
	o.run("req", "-x509", "-key", "k.pem", "-subj", "/CN=good.example.com", "-days", "30", "-out", "c.pem")
	o.run("genpkey", "-algorithm", "ed25519", "-out", "other.pem")
	o.run("pkcs8", "-topk8", "-in", "k.pem", "-passout", "pass:secret", "-v2", "aes-256-cbc", "-out", "enc8.pem")
	o.run("ec", "-in", "k.pem", "-aes256", "-passout", "pass:secret", "-out", "encl.pem")
	root(o)
	suite.Needles.AddKey("bad-input key", o.key("k.pem"))
	suite.Needles.AddKey("bad-input other key", o.key("other.pem"))
	cert, key := o.read("c.pem"), o.read("k.pem")
	der := strings.Join(strings.Split(cert, "\n")[1:len(strings.Split(cert, "\n"))-2], "")
	body := func(c, k any) map[string]any {
		m := map[string]any{}
		if c != nil {
			m["certificate_pem"] = c
		}
		if k != nil {
			m["private_key_pem"] = k
		}
		return m
	}
	cases := []struct {
		name        string
		body        any
		code, field string
	}{
		{"key of another certificate", body(cert, o.read("other.pem")), "ERR_NGROK_1923", "private_key_pem"},
		{"encrypted pkcs8 key", body(cert, o.read("enc8.pem")), "ERR_NGROK_1902", "private_key_pem"},
		{"encrypted legacy pem key", body(cert, o.read("encl.pem")), "ERR_NGROK_1902", "private_key_pem"},
		{"truncated certificate", body(cert[:len(cert)/2], key), "ERR_NGROK_1900", "certificate_pem"},
		{"certificate without its end line", body(strings.TrimSuffix(strings.TrimSpace(cert), "-----END CERTIFICATE-----"), key), "ERR_NGROK_1900", "certificate_pem"},
		{"truncated key", body(cert, key[:len(key)/2]), "ERR_NGROK_1903", "private_key_pem"},
		{"non-pem certificate", body("not a certificate", key), "ERR_NGROK_1900", "certificate_pem"},
		{"bare base64 der certificate", body(der, key), "ERR_NGROK_1900", "certificate_pem"},
		{"non-pem key", body(cert, "hunter2"), "ERR_NGROK_1903", "private_key_pem"},
		{"a truncated second certificate", body(cert+o.read("root.pem")[:300], key), "ERR_NGROK_1900", "certificate_pem"},
		{"a stray end line", body(cert+"-----END CERTIFICATE-----\n", key), "ERR_NGROK_1900", "certificate_pem"},
		{"chain out of order", body(o.read("root.pem")+cert, key), "ERR_NGROK_1900", "certificate_pem"},
		{"leaf followed by an unrelated root", body(cert+o.read("root.pem"), key), "ERR_NGROK_1900", "certificate_pem"},
		{"key in the certificate field", body(key, key), "ERR_NGROK_1900", "certificate_pem"},
		{"certificate in the key field", body(cert, cert), "ERR_NGROK_1903", "private_key_pem"},
		{"two keys", body(cert, key+o.read("other.pem")), "ERR_NGROK_1903", "private_key_pem"},
		{"chain of eleven certificates", body(strings.Repeat(cert, 11), key), "ERR_NGROK_1900", "certificate_pem"},
		{"certificate_pem over 128 KB", body(cert+strings.Repeat(" ", 128<<10), key), "ERR_NGROK_1900", "certificate_pem"},
		{"private_key_pem over 128 KB", body(cert, key+strings.Repeat("\n", 128<<10)), "ERR_NGROK_1903", "private_key_pem"},
		{"no certificate", body(nil, key), "ERR_NGROK_1900", "certificate_pem"},
		{"no key", body(cert, nil), "ERR_NGROK_1903", "private_key_pem"},
		{"empty certificate", body("", key), "ERR_NGROK_1900", "certificate_pem"},
		{"certificate not a string", body(5, key), "ERR_NGROK_215", "certificate_pem"},
		{"description too long", map[string]any{"certificate_pem": cert, "private_key_pem": key, "description": strings.Repeat("d", 256)}, "ERR_NGROK_1914", "description"},
		{"metadata too long", map[string]any{"certificate_pem": cert, "private_key_pem": key, "metadata": strings.Repeat("m", 4097)}, "ERR_NGROK_1915", "metadata"},
		{"unknown field", map[string]any{"certificate_pem": cert, "private_key_pem": key, "chain": "x"}, "ERR_NGROK_214", "chain"},
	}
	before := len(a.Items(t))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := a.Do(t, "POST", pathTLS, c.body)
			suite.Needles.AssertAbsent(t, res.Body)
			res.ExpectError(t, http.StatusBadRequest, c.code, c.field)
		})
	}
	if after := len(a.Items(t)); after != before {
		t.Fatalf("refused uploads stored %d items", after-before)
	}
	// The same material is accepted, with explanatory text around the blocks (RFC 7468) and
	// Windows line endings; PATCH changes only description and metadata.
	a.Do(t, "POST", pathTLS, body("Bag Attributes\n    friendlyName: good\nsubject=CN = good.example.com\n"+cert+"\nthe end\n",
		strings.ReplaceAll(key, "\n", "\r\n"))).Expect(t, http.StatusCreated)
	good := a.Do(t, "POST", pathTLS, body(cert, key)).Expect(t, http.StatusCreated)
	p := pathTLS + "/" + good["id"].(string)
	a.Do(t, "PATCH", p, map[string]any{"certificate_pem": cert}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_214", "certificate_pem")
	a.Do(t, "PATCH", p, map[string]any{}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_606", "")
	a.Do(t, "PATCH", p, map[string]any{"description": strings.Repeat("d", 256)}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_1914", "description")
	if got := a.Do(t, "PATCH", p, map[string]any{"description": "edge cert"}).Expect(t, http.StatusOK); got["description"] != "edge cert" || got["certificate_pem"] != cert {
		t.Fatalf("PATCH: %v", got)
	}
}

// TestCertificateAuthorityUploads checks a CA's derived fields against openssl and refuses a
// leaf, two certificates and a private key block with their codes, storing nothing.
func TestCertificateAuthorityUploads(t *testing.T) {
	_, a := suite.AppAccount(t)
	o := newOpenSSL(t)
	o.run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
		"-days", "90", "-subj", "/O=Acme Inc/CN=Acme Client CA", "-addext", "basicConstraints=critical,CA:TRUE",
		"-addext", "keyUsage=critical,keyCertSign,cRLSign", "-addext", "extendedKeyUsage=clientAuth")
	o.run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "leaf.key", "-out", "leaf.pem",
		"-days", "90", "-subj", "/CN=leaf.example.com", "-addext", "basicConstraints=critical,CA:FALSE")
	suite.Needles.AddKey("ca key", o.key("ca.key"))
	suite.Needles.AddKey("leaf key", o.key("leaf.key"))
	caPEM := o.read("ca.pem")

	res := a.Do(t, "POST", pathCAs, map[string]any{"ca_pem": caPEM, "description": "clients"})
	suite.Needles.AssertAbsent(t, res.Body)
	got := res.Expect(t, http.StatusCreated)
	x := o.text("ca.pem")
	want := map[string]any{
		"ca_pem": caPEM, "subject_common_name": x.Subject["CN"],
		"not_before": x.NotBefore.Format(rfc3339), "not_after": x.NotAfter.Format(rfc3339),
		"key_usages": strs(x.KeyUsage), "extended_key_usages": strs(x.ExtUsage), "description": "clients",
	}
	for k, v := range want {
		if !reflect.DeepEqual(got[k], v) {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
	if !reflect.DeepEqual(got["key_usages"], []any{"cert_sign", "crl_sign"}) {
		t.Errorf("key_usages %v", got["key_usages"])
	}

	cases := []struct {
		name, pem, code string
	}{
		{"leaf certificate", o.read("leaf.pem"), "ERR_NGROK_1913"},
		{"two certificates", caPEM + o.read("leaf.pem"), "ERR_NGROK_1912"},
		{"private key block", o.read("ca.key"), "ERR_NGROK_1911"},
		{"certificate and its key", caPEM + o.read("ca.key"), "ERR_NGROK_1911"},
		{"not pem", "hello", "ERR_NGROK_1911"},
		{"truncated", caPEM[:len(caPEM)/2], "ERR_NGROK_1911"},
		{"empty", "", "ERR_NGROK_1911"},
		{"over 128 KB", caPEM + strings.Repeat(" ", 128<<10), "ERR_NGROK_1911"},
	}
	before := len(a.Items(t))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := a.Do(t, "POST", pathCAs, map[string]any{"ca_pem": c.pem})
			suite.Needles.AssertAbsent(t, res.Body)
			res.ExpectError(t, http.StatusBadRequest, c.code, "ca_pem")
		})
	}
	a.Do(t, "POST", pathCAs, map[string]any{"ca_pem": caPEM, "metadata": strings.Repeat("m", 4097)}).
		ExpectError(t, http.StatusBadRequest, "ERR_NGROK_1917", "metadata")
	if after := len(a.Items(t)); after != before {
		t.Fatalf("refused uploads stored %d items", after-before)
	}
}

// TestAuditEvents checks each mutation records its event type in the account's audit log.
func TestAuditEvents(t *testing.T) {
	_, a := suite.AppAccount(t)
	c, k := goCert(t, false)
	cert := a.Do(t, "POST", pathTLS, map[string]any{"certificate_pem": c, "private_key_pem": k}).Expect(t, http.StatusCreated)
	a.Do(t, "PATCH", pathTLS+"/"+cert["id"].(string), map[string]any{"description": "x"}).Expect(t, http.StatusOK)
	a.Do(t, "DELETE", pathTLS+"/"+cert["id"].(string), nil).Expect(t, http.StatusNoContent)
	caPEM, _ := goCert(t, true)
	ca := a.Do(t, "POST", pathCAs, map[string]any{"ca_pem": caPEM}).Expect(t, http.StatusCreated)
	a.Do(t, "PATCH", pathCAs+"/"+ca["id"].(string), map[string]any{"metadata": "x"}).Expect(t, http.StatusOK)
	a.Do(t, "DELETE", pathCAs+"/"+ca["id"].(string), nil).Expect(t, http.StatusNoContent)
	var types []string
	for _, it := range a.Items(t) {
		if v, ok := it["event_type"]; ok && strings.HasPrefix(it["pk"], "E#") {
			types = append(types, v)
		}
	}
	sort.Strings(types)
	want := []string{"tls_certificate_created.v0", "tls_certificate_updated.v0", "tls_certificate_deleted.v0",
		"certificate_authority_created.v0", "certificate_authority_updated.v0", "certificate_authority_deleted.v0"}
	sort.Strings(want)
	if !reflect.DeepEqual(types, want) {
		t.Fatalf("audit log %v, want %v", types, want)
	}
}

// TestLargestCertificateIsStored uploads a certificate just under the size limit, nearly all of
// it subject alternative names: it must be stored (with its audit event), not fail in DynamoDB.
func TestLargestCertificateIsStored(t *testing.T) {
	_, a := suite.AppAccount(t)
	key := testkit.NewKey(t)
	suite.Needles.AddKey("large certificate key", key)
	var certPEM string
	for n := 1000; ; n += 50 {
		tpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "big.example.com"}}
		for i := 0; i < n; i++ {
			tpl.DNSNames = append(tpl.DNSNames, fmt.Sprintf("host-%05d.a-rather-long-subdomain-name.example.com", i))
		}
		next := testkit.CertPEM(t, tpl, key)
		if len(next) > 128<<10 {
			break
		}
		certPEM = next
	}
	keyPEM := testkit.KeyPEM(t, key)
	got := a.Do(t, "POST", pathTLS, map[string]any{"certificate_pem": certPEM, "private_key_pem": keyPEM,
		"description": strings.Repeat("d", 255), "metadata": strings.Repeat("m", 4096)}).Expect(t, http.StatusCreated)
	if n := len(got["subject_alternative_names"].(map[string]any)["dns_names"].([]any)); n < 1000 {
		t.Fatalf("%d names", n)
	}
	a.Do(t, "PATCH", pathTLS+"/"+got["id"].(string), map[string]any{"description": "x"}).Expect(t, http.StatusOK)
	a.Do(t, "DELETE", pathTLS+"/"+got["id"].(string), nil).Expect(t, http.StatusNoContent)
}
