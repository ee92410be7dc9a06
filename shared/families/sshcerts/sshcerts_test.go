package sshcerts_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"tunnelapi/shared/families/sshcerts"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

// Collection paths, from the descriptors.
var (
	pathCAs       = sshcerts.SSHCertificateAuthoritiesDescriptor.Path
	pathUserCerts = sshcerts.SSHUserCertificatesDescriptor.Path
	pathHostCerts = sshcerts.SSHHostCertificatesDescriptor.Path
)

// suite is the package's stack and the CA private keys it made (read back from the table and
// opened), in every form they could leak in.
var suite testkit.SecretSuite

// TestMain runs the suite, then checks that no CA private key is anywhere in the table or in a
// log line, in PEM, DER, base64 or hex. The CAs still in the table are opened too, whether or
// not a test recorded them.
func TestMain(m *testing.M) {
	suite.Main(m, func(ctx context.Context, items []store.Item) []string {
		for _, it := range items {
			if _, ok := it["private_key"]; ok {
				var ca sshcerts.AuthorityItem
				if err := store.Unmarshal(it, &ca); err != nil {
					return []string{err.Error()}
				}
				if err := recordKey(ctx, &ca); err != nil {
					return []string{err.Error()}
				}
			}
		}
		return nil
	})
}

// recordKey opens a CA's sealed key and records it as a needle.
func recordKey(ctx context.Context, ca *sshcerts.AuthorityItem) error {
	key, err := seal.OpenPrivateKey(ctx, suite.Stack.Deps.Kit.Seal, ca.PrivateKey, ca.AccountID, ca.ID)
	if err != nil {
		return fmt.Errorf("open %s: %w", ca.ID, err)
	}
	suite.Needles.AddKey("CA "+ca.ID, key)
	return nil
}

// newCA creates an SSH CA, records its private key and checks the response does not carry it.
func newCA(t testing.TB, s *testkit.Stack, a *testkit.Account, body map[string]any) map[string]any {
	t.Helper()
	res := a.Do(t, "POST", pathCAs, body)
	ca := res.Expect(t, http.StatusCreated)
	var it sshcerts.AuthorityItem
	if err := s.DB.Get(t.Context(), store.ResourceKey(a.AccountID, ca["id"].(string)), &it); err != nil {
		t.Fatal(err)
	}
	if err := recordKey(t.Context(), &it); err != nil {
		t.Fatal(err)
	}
	suite.Needles.AssertAbsent(t, res.Body)
	return ca
}

// goKey returns a fresh ed25519 public key in authorized-keys form.
func goKey(t testing.TB) string {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return sshcerts.AuthorizedKey(p) + " someone@laptop"
}

// caOf caches one CA per account for the certificate conformance suites.
var caOf sync.Map

func accountCA(t *testing.T, s *testkit.Stack, a *testkit.Account) string {
	if id, ok := caOf.Load(a.AccountID); ok {
		return id.(string)
	}
	id := newCA(t, s, a, map[string]any{})["id"].(string)
	caOf.Store(a.AccountID, id)
	return id
}

func TestAuthoritiesConformance(t *testing.T) {
	s := suite.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: sshcerts.SSHCertificateAuthoritiesDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			return map[string]any{"description": "staging hosts", "private_key_type": "ecdsa"}
		},
		Update:      map[string]any{"metadata": `{"env":"staging"}`},
		UpdateWants: map[string]any{"description": "staging hosts", "metadata": `{"env":"staging"}`, "key_type": "ecdsa"},
		// Prepare (key generation, KMS, signing) runs only for a verified caller: one read of
		// the caller's items before the transaction.
		RoundTrips: map[string]map[string]int{"create": {"BatchGetItem": 1, "TransactWriteItems": 1}},
	})
}

// Both certificate kinds conform alike, each signed by the account's CA.
func TestCertificatesConformance(t *testing.T) {
	s := suite.App(t)
	for _, c := range []struct {
		family    *resource.Descriptor
		principal string
		update    map[string]any
	}{
		{sshcerts.SSHUserCertificatesDescriptor, "ec2-user", map[string]any{"description": "temporary access"}},
		{sshcerts.SSHHostCertificatesDescriptor, "db.example.com", map[string]any{"metadata": "rack 4"}},
	} {
		t.Run(c.family.Path, func(t *testing.T) {
			wants := maps.Clone(c.update)
			wants["principals"] = []any{c.principal}
			s.Conformance(t, testkit.FamilySpec{
				Family: c.family,
				Create: func(t *testing.T, a *testkit.Account, n int) any {
					return map[string]any{"ssh_certificate_authority_id": accountCA(t, s, a), "public_key": goKey(t), "principals": []string{c.principal}}
				},
				Update:      c.update,
				UpdateWants: wants,
				// Prepare (key generation, KMS, signing) runs only for a verified caller: one read of
				// the caller's items before the transaction.
				RoundTrips: map[string]map[string]int{"create": {"BatchGetItem": 1, "TransactWriteItems": 1}},
			})
		})
	}
}

// TestAuthorityKeyTypes creates a CA of every key type, size and curve and checks the public
// key with ssh-keygen; bad combinations get their codes and store nothing.
func TestAuthorityKeyTypes(t *testing.T) {
	s, a := suite.AppAccount(t)
	d := newSSHDir(t)
	cases := []struct {
		name    string
		body    map[string]any
		keyType string
		algo    string
		bits    string
	}{
		{"default is ed25519", map[string]any{}, "ed25519", ssh.KeyAlgoED25519, "256"},
		{"rsa 2048", map[string]any{"private_key_type": "rsa", "key_size": 2048}, "rsa", ssh.KeyAlgoRSA, "2048"},
		{"rsa defaults to 4096", map[string]any{"private_key_type": "rsa"}, "rsa", ssh.KeyAlgoRSA, "4096"},
		{"ecdsa defaults to p256", map[string]any{"private_key_type": "ecdsa"}, "ecdsa", ssh.KeyAlgoECDSA256, "256"},
		{"ecdsa p384", map[string]any{"private_key_type": "ecdsa", "elliptic_curve": "p384"}, "ecdsa", ssh.KeyAlgoECDSA384, "384"},
		{"ecdsa p521 in capitals", map[string]any{"private_key_type": "ECDSA", "elliptic_curve": "P521"}, "ecdsa", ssh.KeyAlgoECDSA521, "521"},
		{"zero values count as absent", map[string]any{"private_key_type": "ed25519", "key_size": 0, "elliptic_curve": ""}, "ed25519", ssh.KeyAlgoED25519, "256"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ca := newCA(t, s, a, c.body)
			if ca["key_type"] != c.keyType {
				t.Fatalf("key_type %v, want %s", ca["key_type"], c.keyType)
			}
			pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(ca["public_key"].(string)))
			if err != nil || pub.Type() != c.algo {
				t.Fatalf("public_key %v: %v", ca["public_key"], err)
			}
			f := d.write("ca.pub", ca["public_key"].(string)+"\n")
			if bits := strings.Fields(d.run("ssh-keygen", "-l", "-f", f))[0]; bits != c.bits {
				t.Fatalf("ssh-keygen says %s bits, want %s", bits, c.bits)
			}
		})
	}
	bad := []struct {
		name        string
		body        map[string]any
		code, field string
	}{
		{"unknown key type", map[string]any{"private_key_type": "dsa"}, "ERR_NGROK_1936", "private_key_type"},
		{"rsa 1024", map[string]any{"private_key_type": "rsa", "key_size": 1024}, "ERR_NGROK_1939", "key_size"},
		{"rsa 3072", map[string]any{"private_key_type": "rsa", "key_size": 3072}, "ERR_NGROK_1939", "key_size"},
		{"key size for ed25519", map[string]any{"key_size": 2048}, "ERR_NGROK_1940", "key_size"},
		{"key size for ecdsa", map[string]any{"private_key_type": "ecdsa", "key_size": 4096}, "ERR_NGROK_1940", "key_size"},
		{"unknown curve", map[string]any{"private_key_type": "ecdsa", "elliptic_curve": "p224"}, "ERR_NGROK_1941", "elliptic_curve"},
		{"curve for rsa", map[string]any{"private_key_type": "rsa", "elliptic_curve": "p256"}, "ERR_NGROK_1942", "elliptic_curve"},
		{"curve for the default type", map[string]any{"elliptic_curve": "p256"}, "ERR_NGROK_1942", "elliptic_curve"},
		{"key size as a string", map[string]any{"private_key_type": "rsa", "key_size": "2048"}, "ERR_NGROK_215", "key_size"},
		{"description too long", map[string]any{"description": strings.Repeat("d", 256)}, "ERR_NGROK_1916", "description"},
		{"metadata too long", map[string]any{"metadata": strings.Repeat("m", 4097)}, "ERR_NGROK_1917", "metadata"},
		{"a private key cannot be uploaded", map[string]any{"private_key": "x"}, "ERR_NGROK_214", "private_key"},
	}
	before := len(a.Items(t))
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			a.Do(t, "POST", pathCAs, c.body).ExpectError(t, http.StatusBadRequest, c.code, c.field)
		})
	}
	if after := len(a.Items(t)); after != before {
		t.Fatalf("refused creates stored %d items", after-before)
	}
}

const sshTime = "2006-01-02T15:04:05"

// TestCertificatesInspectedBySSHKeygen checks with `ssh-keygen -L` that each certificate holds
// the principals, validity, options and extensions asked for (or the defaults), its own id as
// key id, and the CA's signature.
func TestCertificatesInspectedBySSHKeygen(t *testing.T) {
	s, a := suite.AppAccount(t)
	d := newSSHDir(t)
	edCA := newCA(t, s, a, map[string]any{})
	rsaCA := newCA(t, s, a, map[string]any{"private_key_type": "rsa", "key_size": 2048})
	ecKey := d.keygen("ec", "-t", "ecdsa", "-b", "384")
	rsaKey := d.keygen("rsa", "-t", "rsa", "-b", "2048")
	edKey := d.keygen("ed", "-t", "ed25519")
	now := time.Now().UTC()
	cases := []struct {
		name     string
		path     string
		ca       map[string]any
		body     map[string]any
		keyType  string
		certType string
		from, to string // empty: the defaults
		want     certInfo
	}{
		{"user certificate with everything", pathUserCerts, edCA, map[string]any{
			"public_key": ecKey, "principals": []string{"alice", "bob"},
			"critical_options": map[string]string{"force-command": "/usr/bin/uptime", "source-address": "127.0.0.1/32,10.0.0.0/8,2001:db8::/32"},
			"extensions":       map[string]string{"permit-port-forwarding": "", "permit-pty": "", "login@example.com": ""},
			"valid_after":      "2026-01-02T03:04:05Z", "valid_until": "2027-01-02T03:04:05Z"},
			"ecdsa", "ecdsa-sha2-nistp384-cert-v01@openssh.com user certificate", "2026-01-02T03:04:05", "2027-01-02T03:04:05",
			certInfo{Principals: []string{"alice", "bob"},
				CriticalOptions: []string{"force-command /usr/bin/uptime", "source-address 127.0.0.1/32,10.0.0.0/8,2001:db8::/32"},
				// ssh-keygen flags extensions it does not know, which OpenSSH ignores.
				Extensions: []string{"login@example.com UNKNOWN FLAG OPTION", "permit-port-forwarding", "permit-pty"}}},
		{"user certificate with defaults", pathUserCerts, rsaCA, map[string]any{"public_key": rsaKey},
			"rsa", "ssh-rsa-cert-v01@openssh.com user certificate", "", "",
			certInfo{Extensions: []string{"permit-pty", "permit-user-rc"}}},
		{"user certificate without extensions", pathUserCerts, edCA, map[string]any{"public_key": edKey,
			"principals": []string{"deploy"}, "extensions": map[string]string{}, "valid_until": now.Add(time.Hour).Format(time.RFC3339)},
			"ed25519", "ssh-ed25519-cert-v01@openssh.com user certificate", "", now.Add(time.Hour).Format(sshTime),
			certInfo{Principals: []string{"deploy"}}},
		{"host certificate", pathHostCerts, rsaCA, map[string]any{"public_key": edKey,
			"principals": []string{"db.example.com", "10.2.42.9"}, "valid_after": "2026-03-01T00:00:00Z"},
			"ed25519", "ssh-ed25519-cert-v01@openssh.com host certificate", "2026-03-01T00:00:00", "2027-03-01T00:00:00",
			certInfo{Principals: []string{"db.example.com", "10.2.42.9"}}},
		{"host certificate with defaults", pathHostCerts, edCA, map[string]any{"public_key": ecKey},
			"ecdsa", "ecdsa-sha2-nistp384-cert-v01@openssh.com host certificate", "", "", certInfo{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := map[string]any{"ssh_certificate_authority_id": c.ca["id"]}
			for k, v := range c.body {
				body[k] = v
			}
			before := time.Now().UTC().Truncate(time.Second)
			res := a.Do(t, "POST", c.path, body)
			suite.Needles.AssertAbsent(t, res.Body)
			got := res.Expect(t, http.StatusCreated)
			after := time.Now().UTC()
			if got["key_type"] != c.keyType || got["ssh_certificate_authority_id"] != c.ca["id"] || got["public_key"] != c.body["public_key"] {
				t.Fatalf("response %v", got)
			}
			ci := d.inspect(got["certificate"].(string))
			if ci.Type != c.certType {
				t.Errorf("type %q, want %q", ci.Type, c.certType)
			}
			if ci.KeyID != got["id"] {
				t.Errorf("key id %q, want the certificate's id %v", ci.KeyID, got["id"])
			}
			if fp := d.fingerprint(c.ca["public_key"].(string)); !strings.Contains(ci.SigningCA, fp) {
				t.Errorf("signing CA %q, want %s", ci.SigningCA, fp)
			}
			if c.ca["key_type"] == "rsa" && !strings.Contains(ci.SigningCA, "(using rsa-sha2-") {
				t.Errorf("an RSA CA must sign with rsa-sha2-256 or -512 (OpenSSH refuses ssh-rsa, SHA-1): %q", ci.SigningCA)
			}
			from, to := c.from, c.to
			if from == "" { // default: now
				va, err := time.Parse(sshTime, ci.ValidFrom)
				if err != nil || va.Before(before) || va.After(after) {
					t.Errorf("valid from %q, want the time of the request", ci.ValidFrom)
				}
				from = ci.ValidFrom
			}
			if to == "" {
				va, _ := time.Parse(sshTime, from)
				if c.path == pathUserCerts {
					to = va.Add(24 * time.Hour).Format(sshTime)
				} else {
					to = va.AddDate(1, 0, 0).Format(sshTime)
				}
			}
			if ci.ValidFrom != from || ci.ValidTo != to {
				t.Errorf("valid %s to %s, want %s to %s", ci.ValidFrom, ci.ValidTo, from, to)
			}
			if got["valid_after"] != from+"Z" || got["valid_until"] != to+"Z" {
				t.Errorf("response validity %v to %v, want %sZ to %sZ", got["valid_after"], got["valid_until"], from, to)
			}
			if !reflect.DeepEqual(ci.Principals, c.want.Principals) || !reflect.DeepEqual(ci.CriticalOptions, c.want.CriticalOptions) ||
				!reflect.DeepEqual(ci.Extensions, c.want.Extensions) {
				t.Errorf("ssh-keygen shows principals %q options %q extensions %q, want %q %q %q", ci.Principals, ci.CriticalOptions,
					ci.Extensions, c.want.Principals, c.want.CriticalOptions, c.want.Extensions)
			}
			if c.path == pathHostCerts {
				if _, ok := got["extensions"]; ok {
					t.Error("a host certificate reports extensions")
				}
			} else if len(got["extensions"].(map[string]any)) != len(c.want.Extensions) {
				t.Errorf("extensions %v", got["extensions"])
			}
		})
	}
}

// TestSSHDAcceptsUserCertificates runs a real sshd trusting an RSA CA of ours and logs in with
// certificates we issued: the allowed principal gets in; another principal, an expired or not
// yet valid certificate, another CA's certificate and a source address that excludes the client
// do not.
func TestSSHDAcceptsUserCertificates(t *testing.T) {
	s, a := suite.AppAccount(t)
	d := newSSHDir(t)
	ca := newCA(t, s, a, map[string]any{"private_key_type": "rsa", "key_size": 2048})
	other := newCA(t, s, a, map[string]any{})
	d.keygen("host", "-t", "ed25519")
	srv := d.startSSHD(ca["public_key"].(string), "host", "")
	userKey := d.keygen("user", "-t", "ed25519")
	me := currentUser(t)
	// reason is what sshd logs when it refuses the certificate.
	cases := []struct {
		name   string
		ca     map[string]any
		extra  map[string]any
		reason string
	}{
		{"allowed principal", ca, map[string]any{"principals": []string{me}}, ""},
		{"another principal", ca, map[string]any{"principals": []string{"mallory"}}, "Certificate invalid: name is not a listed principal"},
		{"expired", ca, map[string]any{"principals": []string{me}, "valid_after": "2020-01-01T00:00:00Z", "valid_until": "2020-01-02T00:00:00Z"}, "Certificate invalid: expired"},
		{"not yet valid", ca, map[string]any{"principals": []string{me}, "valid_after": "2099-01-01T00:00:00Z"}, "Certificate invalid: not yet valid"},
		{"another CA", other, map[string]any{"principals": []string{me}}, "Failed publickey for " + me},
		{"source address includes the client", ca, map[string]any{"principals": []string{me}, "critical_options": map[string]string{"source-address": "127.0.0.0/8"}}, ""},
		{"source address excludes the client", ca, map[string]any{"principals": []string{me}, "critical_options": map[string]string{"source-address": "10.0.0.0/8"}}, "not from a permitted source address"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := map[string]any{"ssh_certificate_authority_id": c.ca["id"], "public_key": userKey}
			for k, v := range c.extra {
				body[k] = v
			}
			cert := a.Do(t, "POST", pathUserCerts, body).Expect(t, http.StatusCreated)
			mark := srv.log.Len()
			err := d.login(srv, "user", cert["certificate"].(string), "")
			if c.reason == "" && err != nil {
				t.Fatalf("sshd refused the certificate: %v\nsshd: %s", err, srv.log.String())
			}
			if c.reason != "" {
				if err == nil {
					t.Fatal("sshd let the client in")
				}
				if !srv.log.waitFor(mark, c.reason) {
					t.Fatalf("sshd refused, but not with %q: %s", c.reason, srv.log.since(mark))
				}
			}
		})
	}
}

// TestSSHVerifiesHostCertificates runs sshd with host certificates we issued; the ssh client
// trusts our CA through `@cert-authority` in known_hosts with StrictHostKeyChecking=yes.
func TestSSHVerifiesHostCertificates(t *testing.T) {
	s, a := suite.AppAccount(t)
	d := newSSHDir(t)
	hostCA := newCA(t, s, a, map[string]any{"private_key_type": "ecdsa", "elliptic_curve": "p384"})
	other := newCA(t, s, a, map[string]any{})
	userCA := newCA(t, s, a, map[string]any{})
	userKey := d.keygen("user", "-t", "ed25519")
	userCert := a.Do(t, "POST", pathUserCerts, map[string]any{
		"ssh_certificate_authority_id": userCA["id"], "public_key": userKey, "principals": []string{currentUser(t)}}).Expect(t, http.StatusCreated)
	knownHosts := "@cert-authority * " + hostCA["public_key"].(string)
	// reason is what the ssh client says when it refuses the host.
	cases := []struct {
		name   string
		ca     map[string]any
		extra  map[string]any
		reason string
	}{
		{"host certificate for the address connected to", hostCA, map[string]any{"principals": []string{"127.0.0.1", "localhost"}}, ""},
		{"another CA", other, map[string]any{"principals": []string{"127.0.0.1"}}, "Host key verification failed"},
		{"another host name", hostCA, map[string]any{"principals": []string{"db.example.com"}}, "Certificate invalid: name is not a listed principal"},
		{"expired", hostCA, map[string]any{"principals": []string{"127.0.0.1"}, "valid_after": "2020-01-01T00:00:00Z", "valid_until": "2021-01-01T00:00:00Z"}, "Certificate invalid: expired"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			host := fmt.Sprintf("host%d", i)
			body := map[string]any{"ssh_certificate_authority_id": c.ca["id"], "public_key": d.keygen(host, "-t", "ed25519")}
			for k, v := range c.extra {
				body[k] = v
			}
			cert := a.Do(t, "POST", pathHostCerts, body).Expect(t, http.StatusCreated)
			d.write(host+"-cert.pub", cert["certificate"].(string)+"\n")
			srv := d.startSSHD(userCA["public_key"].(string), host, host+"-cert.pub")
			err := d.login(srv, "user", userCert["certificate"].(string), knownHosts)
			if c.reason == "" && err != nil {
				t.Fatalf("ssh refused the host certificate: %v\nsshd: %s", err, srv.log.String())
			}
			if c.reason != "" && (err == nil || !strings.Contains(err.Error(), c.reason)) {
				t.Fatalf("ssh should refuse the host with %q: %v", c.reason, err)
			}
		})
	}
}

// TestBadCertificateRequests sends invalid certificate requests to both families: each gets its
// code naming the field, nothing is stored and the CA's count is unchanged.
func TestBadCertificateRequests(t *testing.T) {
	s := suite.App(t)
	a, b := s.NewAccount(t), s.NewAccount(t)
	d := newSSHDir(t)
	ca := newCA(t, s, a, map[string]any{})
	foreign := newCA(t, s, b, map[string]any{})
	key := goKey(t)
	// A security-key type OpenSSH knows but the API does not sign: built by hand, as no tool
	// here can make one without hardware.
	skPub, _, _ := ed25519.GenerateKey(rand.Reader)
	skKey := "sk-ssh-ed25519@openssh.com " + base64.StdEncoding.EncodeToString(ssh.Marshal(struct {
		Name, Key, Application string
	}{"sk-ssh-ed25519@openssh.com", string(skPub), "ssh:"}))
	cert := a.Do(t, "POST", pathUserCerts, map[string]any{"ssh_certificate_authority_id": ca["id"], "public_key": key}).Expect(t, http.StatusCreated)
	caKey := store.ResourceKey(a.AccountID, ca["id"].(string))
	count := func() int64 {
		var it sshcerts.AuthorityItem
		if err := s.DB.Get(t.Context(), caKey, &it); err != nil {
			t.Fatal(err)
		}
		return it.Certificates
	}
	if count() != 1 {
		t.Fatalf("CA counts %d certificates, want 1", count())
	}
	with := func(over map[string]any) map[string]any {
		m := map[string]any{"ssh_certificate_authority_id": ca["id"], "public_key": key}
		for k, v := range over {
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		return m
	}
	type badCase struct {
		name        string
		body        map[string]any
		code, field string
	}
	common := []badCase{
		{"no CA", with(map[string]any{"ssh_certificate_authority_id": nil}), "ERR_NGROK_1949", "ssh_certificate_authority_id"},
		{"unknown CA", with(map[string]any{"ssh_certificate_authority_id": ids.New(ids.SSHCertificateAuthority)}), "ERR_NGROK_1949", "ssh_certificate_authority_id"},
		{"another account's CA", with(map[string]any{"ssh_certificate_authority_id": foreign["id"]}), "ERR_NGROK_1949", "ssh_certificate_authority_id"},
		{"not a CA id", with(map[string]any{"ssh_certificate_authority_id": cert["id"]}), "ERR_NGROK_1949", "ssh_certificate_authority_id"},
		{"no public key", with(map[string]any{"public_key": nil}), "ERR_NGROK_1952", "public_key"},
		{"empty public key", with(map[string]any{"public_key": "  "}), "ERR_NGROK_1952", "public_key"},
		{"garbage public key", with(map[string]any{"public_key": "ssh-ed25519 AAAAnotbase64!!"}), "ERR_NGROK_612", "public_key"},
		{"truncated public key", with(map[string]any{"public_key": key[:40]}), "ERR_NGROK_612", "public_key"},
		{"two public keys", with(map[string]any{"public_key": key + "\n" + goKey(t)}), "ERR_NGROK_612", "public_key"},
		{"a certificate as the public key", with(map[string]any{"public_key": cert["certificate"]}), "ERR_NGROK_612", "public_key"},
		{"a security key", with(map[string]any{"public_key": skKey}), "ERR_NGROK_612", "public_key"},
		{"a private key", with(map[string]any{"public_key": d.keygen("k", "-t", "ed25519") + "\n" + d.read("k")}), "ERR_NGROK_612", "public_key"},
		{"public key over 16 KB", with(map[string]any{"public_key": key + " " + strings.Repeat("c", 16<<10)}), "ERR_NGROK_612", "public_key"},
		{"empty principal", with(map[string]any{"principals": []string{""}}), "ERR_NGROK_215", "principals"},
		{"principals over 16 KB together", with(map[string]any{"principals": manyNames(100, 200)}), "ERR_NGROK_215", "principals"},
		{"principals over 256", with(map[string]any{"principals": manyNames(257, 3)}), "ERR_NGROK_215", "principals"},
		{"principal with a space", with(map[string]any{"principals": []string{"a b"}}), "ERR_NGROK_215", "principals"},
		{"principal with a comma", with(map[string]any{"principals": []string{"a,b"}}), "ERR_NGROK_215", "principals"},
		{"valid_after not rfc 3339", with(map[string]any{"valid_after": "yesterday"}), "ERR_NGROK_241", "valid_after"},
		{"valid_until not rfc 3339", with(map[string]any{"valid_until": "2026-13-01T00:00:00Z"}), "ERR_NGROK_241", "valid_until"},
		{"valid_until without a zone", with(map[string]any{"valid_until": "2026-01-01T00:00:00"}), "ERR_NGROK_241", "valid_until"},
		{"valid_until before valid_after", with(map[string]any{"valid_after": "2026-01-02T00:00:00Z", "valid_until": "2026-01-01T00:00:00Z"}), "ERR_NGROK_215", "valid_until"},
		{"valid_until equal to valid_after", with(map[string]any{"valid_after": "2026-01-02T00:00:00Z", "valid_until": "2026-01-02T00:00:00+00:00"}), "ERR_NGROK_215", "valid_until"},
		{"valid_after before 1970", with(map[string]any{"valid_after": "1969-12-31T00:00:00Z"}), "ERR_NGROK_215", "valid_after"},
		{"description too long", with(map[string]any{"description": strings.Repeat("d", 256)}), "ERR_NGROK_1914", "description"},
		{"metadata too long", with(map[string]any{"metadata": strings.Repeat("m", 4097)}), "ERR_NGROK_1915", "metadata"},
	}
	userOnly := []badCase{
		{"unknown critical option", with(map[string]any{"critical_options": map[string]string{"no-pty": ""}}), "ERR_NGROK_215", "critical_options"},
		{"source-address not a cidr", with(map[string]any{"critical_options": map[string]string{"source-address": "10.0.0.0/33"}}), "ERR_NGROK_215", "critical_options"},
		{"source-address with host bits", with(map[string]any{"critical_options": map[string]string{"source-address": "10.0.0.1/8"}}), "ERR_NGROK_215", "critical_options"},
		{"source-address with a bad entry", with(map[string]any{"critical_options": map[string]string{"source-address": "10.0.0.0/8,example.com"}}), "ERR_NGROK_215", "critical_options"},
		{"empty source-address", with(map[string]any{"critical_options": map[string]string{"source-address": ""}}), "ERR_NGROK_215", "critical_options"},
		{"empty force-command", with(map[string]any{"critical_options": map[string]string{"force-command": ""}}), "ERR_NGROK_215", "critical_options"},
		{"critical option not a string", with(map[string]any{"critical_options": map[string]any{"force-command": 1}}), "ERR_NGROK_215", ""},
		{"standard extension with a value", with(map[string]any{"extensions": map[string]string{"permit-pty": "yes"}}), "ERR_NGROK_215", "extensions"},
		{"empty extension name", with(map[string]any{"extensions": map[string]string{"": ""}}), "ERR_NGROK_215", "extensions"},
		{"extensions over 16 KB together", with(map[string]any{"extensions": map[string]string{"a@example.com": strings.Repeat("v", 4000),
			"b@example.com": strings.Repeat("v", 4000), "c@example.com": strings.Repeat("v", 4000), "d@example.com": strings.Repeat("v", 4000),
			"e@example.com": strings.Repeat("v", 4000)}}), "ERR_NGROK_215", "extensions"},
		{"force-command over 4 KB", with(map[string]any{"critical_options": map[string]string{"force-command": strings.Repeat("x", 4097)}}), "ERR_NGROK_215", "critical_options"},
	}
	hostOnly := []badCase{
		{"critical options on a host certificate", with(map[string]any{"critical_options": map[string]string{}}), "ERR_NGROK_214", "critical_options"},
		{"extensions on a host certificate", with(map[string]any{"extensions": map[string]string{}}), "ERR_NGROK_214", "extensions"},
	}
	before := len(a.Items(t))
	for _, fam := range []struct {
		path  string
		cases []badCase
	}{{pathUserCerts, append(common, userOnly...)}, {pathHostCerts, append(common, hostOnly...)}} {
		for _, c := range fam.cases {
			t.Run(fam.path+" "+c.name, func(t *testing.T) {
				res := a.Do(t, "POST", fam.path, c.body)
				suite.Needles.AssertAbsent(t, res.Body)
				res.ExpectError(t, http.StatusBadRequest, c.code, c.field)
			})
		}
	}
	if after := len(a.Items(t)); after != before {
		t.Fatalf("refused requests stored %d items", after-before)
	}
	if count() != 1 {
		t.Fatalf("CA counts %d certificates after refused requests, want 1", count())
	}
	// PATCH changes description and metadata only.
	p := pathUserCerts + "/" + cert["id"].(string)
	a.Do(t, "PATCH", p, map[string]any{"principals": []string{"root"}}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_214", "principals")
	a.Do(t, "PATCH", p, map[string]any{}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_606", "")
	a.Do(t, "PATCH", p, map[string]any{"metadata": strings.Repeat("m", 4097)}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_1915", "metadata")
	if got := a.Do(t, "PATCH", p, map[string]any{"description": "ok"}).Expect(t, http.StatusOK); got["certificate"] != cert["certificate"] {
		t.Fatal("PATCH changed the certificate")
	}
}

// TestAuthorityWithCertificatesCannotBeDeleted: 1964 while any certificate names the CA; once
// they are gone the CA deletes, and a deleted CA signs nothing (1949).
func TestAuthorityWithCertificatesCannotBeDeleted(t *testing.T) {
	s, a := suite.AppAccount(t)
	ca := newCA(t, s, a, map[string]any{})
	caPath := pathCAs + "/" + ca["id"].(string)
	body := map[string]any{"ssh_certificate_authority_id": ca["id"], "public_key": goKey(t)}
	user := a.Do(t, "POST", pathUserCerts, body).Expect(t, http.StatusCreated)
	host := a.Do(t, "POST", pathHostCerts, body).Expect(t, http.StatusCreated)
	a.Do(t, "DELETE", caPath, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_1964", "")
	a.Do(t, "DELETE", pathUserCerts+"/"+user["id"].(string), nil).Expect(t, http.StatusNoContent)
	a.Do(t, "DELETE", caPath, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_1964", "")
	// A PATCH of the CA keeps its count.
	a.Do(t, "PATCH", caPath, map[string]any{"description": "still in use"}).Expect(t, http.StatusOK)
	a.Do(t, "DELETE", caPath, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_1964", "")
	a.Do(t, "DELETE", pathHostCerts+"/"+host["id"].(string), nil).Expect(t, http.StatusNoContent)
	a.Do(t, "DELETE", caPath, nil).Expect(t, http.StatusNoContent)
	a.Do(t, "POST", pathUserCerts, body).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_1949", "ssh_certificate_authority_id")
	a.Do(t, "POST", pathHostCerts, body).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_1949", "ssh_certificate_authority_id")
}

// TestIssuanceRacesDeletion issues certificates concurrently with a delete of their CA: either
// the delete wins and no certificate exists, or it is refused and the CA's count equals the
// certificates that name it. Never a 5xx, never an orphan.
func TestIssuanceRacesDeletion(t *testing.T) {
	s, a := suite.AppAccount(t)
	key := goKey(t)
	for round := 0; round < 6; round++ {
		ca := newCA(t, s, a, map[string]any{})
		id := ca["id"].(string)
		deleter := round % 8
		responses := testkit.AtOnce(8, func(i int) *testkit.Response {
			if i == deleter {
				return a.Do(t, "DELETE", pathCAs+"/"+id, nil)
			}
			return a.Do(t, "POST", pathUserCerts, map[string]any{"ssh_certificate_authority_id": id, "public_key": key})
		})
		deleted, created := responses[deleter].Status, 0
		for i, res := range responses {
			switch {
			case i == deleter:
			case res.Status == http.StatusCreated:
				created++
			default:
				res.ExpectError(t, http.StatusBadRequest, "ERR_NGROK_1949", "ssh_certificate_authority_id")
			}
		}
		named := 0
		for _, it := range a.Items(t) {
			if it["ca_id"] == id && strings.HasPrefix(it["sk"], ids.SSHUserCertificate+"_") {
				named++
			}
		}
		var it sshcerts.AuthorityItem
		err := s.DB.Get(t.Context(), store.ResourceKey(a.AccountID, id), &it)
		t.Logf("round %d: delete %d, %d issued", round, deleted, created)
		switch deleted {
		case http.StatusNoContent:
			if !store.IsNotFound(err) || created != 0 || named != 0 {
				t.Fatalf("round %d: CA deleted but %d certificates issued, %d stored (%v)", round, created, named, err)
			}
		case http.StatusBadRequest:
			if err != nil || created == 0 || it.Certificates != int64(named) || named != created {
				t.Fatalf("round %d: delete refused; CA counts %d, %d stored, %d issued (%v)", round, it.Certificates, named, created, err)
			}
		default:
			t.Fatalf("round %d: delete answered %d", round, deleted)
		}
	}
}

// TestRoundTrips: issuing a certificate costs three DynamoDB round trips the first time a CA
// signs in a process (the caller verified before Prepare, the CA read, then the transaction) and
// two afterwards (the caller verified, the transaction); so does creating a CA; reads one,
// lists two in parallel.
func TestRoundTrips(t *testing.T) {
	s, a := suite.AppAccount(t)
	ca := newCA(t, s, a, map[string]any{})
	body := map[string]any{"ssh_certificate_authority_id": ca["id"], "public_key": goKey(t)}
	cert := a.Do(t, "POST", pathUserCerts, body).Expect(t, http.StatusCreated)
	p := pathUserCerts + "/" + cert["id"].(string)
	fresh := newCA(t, s, a, map[string]any{})
	a.WithinCalls(t,
		testkit.Trip("issue with a CA not yet used", "POST", pathHostCerts,
			map[string]any{"ssh_certificate_authority_id": fresh["id"], "public_key": goKey(t)}, 3),
		testkit.Trip("issue", "POST", pathUserCerts, body, 2),
		testkit.Trip("get", "GET", p, nil, 1),
		testkit.Trip("list", "GET", pathUserCerts, nil, 2),
		testkit.Trip("update", "PATCH", p, map[string]any{"description": "x"}, 2),
		testkit.Trip("delete", "DELETE", p, nil, 2),
		testkit.Trip("create CA", "POST", pathCAs, map[string]any{}, 2),
	)
}

// TestAuditEvents checks each mutation of the three families records its event type.
func TestAuditEvents(t *testing.T) {
	s, a := suite.AppAccount(t)
	ca := newCA(t, s, a, map[string]any{})
	caPath := pathCAs + "/" + ca["id"].(string)
	a.Do(t, "PATCH", caPath, map[string]any{"description": "x"}).Expect(t, http.StatusOK)
	for _, path := range []string{pathUserCerts, pathHostCerts} {
		c := a.Do(t, "POST", path, map[string]any{"ssh_certificate_authority_id": ca["id"], "public_key": goKey(t)}).Expect(t, http.StatusCreated)
		a.Do(t, "PATCH", path+"/"+c["id"].(string), map[string]any{"metadata": "x"}).Expect(t, http.StatusOK)
		a.Do(t, "DELETE", path+"/"+c["id"].(string), nil).Expect(t, http.StatusNoContent)
	}
	a.Do(t, "DELETE", caPath, nil).Expect(t, http.StatusNoContent)
	var got []string
	for _, it := range a.Items(t) {
		if strings.HasPrefix(it["pk"], "E#") {
			got = append(got, it["event_type"])
		}
	}
	var want []string
	for _, kind := range []string{"ssh_certificate_authority", "ssh_user_certificate", "ssh_host_certificate"} {
		for _, verb := range []string{"created", "updated", "deleted"} {
			want = append(want, kind+"_"+verb+".v0")
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("audit log %v, want %v", got, want)
	}
}

// manyNames returns n distinct names of size bytes each.
func manyNames(n, size int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%0*d", size, i)
	}
	return out
}

// TestLargestCertificateIsStored issues a user certificate at every size limit at once: it must
// be stored with its audit event, not fail in DynamoDB.
func TestLargestCertificateIsStored(t *testing.T) {
	s, a := suite.AppAccount(t)
	ca := newCA(t, s, a, map[string]any{"private_key_type": "rsa", "key_size": 2048})
	exts := map[string]string{}
	for i := 0; i < 4; i++ {
		exts[fmt.Sprintf("x%d@example.com", i)] = strings.Repeat("v", 4000)
	}
	cert := a.Do(t, "POST", pathUserCerts, map[string]any{
		"ssh_certificate_authority_id": ca["id"], "public_key": goKey(t) + strings.Repeat("c", 15<<10),
		"principals": manyNames(160, 100), "extensions": exts,
		"critical_options": map[string]string{"force-command": strings.Repeat("x", 4096), "source-address": "10.0.0.0/8"},
		"description":      strings.Repeat("d", 255), "metadata": strings.Repeat("m", 4096),
	}).Expect(t, http.StatusCreated)
	a.Do(t, "DELETE", pathUserCerts+"/"+cert["id"].(string), nil).Expect(t, http.StatusNoContent)
}

// TestRefusedCallerGeneratesNoKey: a refused caller (here the key of a deactivated bot user,
// whose token still exists) creating an RSA-4096 SSH CA gets its 403 without a key pair being
// generated, or sealed, for it: the caller is verified, checked against the account's IP
// restriction and admitted by the rate limit before Prepare runs. An admitted caller's create
// generates exactly one.
func TestRefusedCallerGeneratesNoKey(t *testing.T) {
	s, a := suite.AppAccount(t)
	bot := a.Do(t, "POST", "/bot_users", map[string]any{"name": "refused"}).Expect(t, http.StatusCreated)["id"].(string)
	token := a.Do(t, "POST", "/api_keys", map[string]any{"owner_id": bot}).Expect(t, http.StatusCreated)["token"].(string)
	a.Do(t, "PATCH", "/bot_users/"+bot, map[string]any{"active": false}).Expect(t, http.StatusOK)

	before := sshcerts.KeysGenerated()
	s.Do(t, "POST", pathCAs, token, map[string]any{"private_key_type": "rsa", "key_size": 4096}).ExpectError(t, http.StatusForbidden, api.CodeUnknownKey, "")
	if n := sshcerts.KeysGenerated() - before; n != 0 {
		t.Fatalf("a refused caller's create started %d key generations, want none", n)
	}
	a.Do(t, "POST", pathCAs, map[string]any{"private_key_type": "ed25519"}).Expect(t, http.StatusCreated)
	if n := sshcerts.KeysGenerated() - before; n != 1 {
		t.Fatalf("an admitted create started %d key generations, want 1", n)
	}
}
