package sshcerts_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"tunnelapi/shared/families/sshcerts"
	"tunnelapi/shared/testing/testkit"
)

func FuzzParsePublicKey(f *testing.F) {
	rk, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		f.Fatal(err)
	}
	ek, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	for _, k := range []any{rk.Public(), ek.Public()} {
		p, err := ssh.NewPublicKey(k)
		if err != nil {
			f.Fatal(err)
		}
		line := sshcerts.AuthorizedKey(p)
		f.Add(line)
		f.Add(line + " comment with spaces")
		f.Add(`command="/bin/true",no-pty ` + line)
		f.Add(line[:len(line)/2])
		f.Add(line + "\n" + line)
	}
	f.Add(goKey(f))
	f.Add("")
	f.Add("ssh-ed25519")
	f.Add("ssh-ed25519 AAAA")
	f.Add("ssh-ed25519-cert-v01@openssh.com AAAAIHNzaC1lZDI1NTE5LWNlcnQtdjAxQG9wZW5zc2guY29t")
	f.Fuzz(func(t *testing.T, s string) {
		pub, keyType, err := sshcerts.ParsePublicKey(s)
		if !testkit.IsFieldError(err) {
			t.Fatalf("ParsePublicKey error is not a 4xx naming a field: %v", err)
		}
		if err == nil && (pub == nil || keyType == "") {
			t.Fatal("accepted a key without a type")
		}
	})
}

// FuzzCertificateFields runs the validation of every other certificate field on arbitrary input.
func FuzzCertificateFields(f *testing.F) {
	f.Add("alice", "source-address", "10.0.0.0/8,::1", "permit-pty", "", "2026-01-02T03:04:05Z", "2027-01-02T03:04:05Z")
	f.Add("", "force-command", "", "login@example.com", "x", "yesterday", "")
	f.Add("a,b", "no-pty", "1", "", "", "2026-01-02T03:04:05+02:00", "2026-01-02T03:04:05Z")
	f.Add("db.example.com", "source-address", "10.0.0.1/8", "permit-pty", "v", "1969-01-01T00:00:00Z", "9999-12-31T23:59:59Z")
	f.Fuzz(func(t *testing.T, principal, option, optionValue, extension, extensionValue, after, until string) {
		ps := strings.Split(principal, "\n")
		if _, err := sshcerts.Principals(&ps); !testkit.IsFieldError(err) {
			t.Fatalf("Principals: %v", err)
		}
		opts := map[string]string{option: optionValue}
		if _, err := sshcerts.CriticalOptions(&opts); !testkit.IsFieldError(err) {
			t.Fatalf("CriticalOptions: %v", err)
		}
		exts := map[string]string{extension: extensionValue}
		if _, err := sshcerts.Extensions(&exts); !testkit.IsFieldError(err) {
			t.Fatalf("Extensions: %v", err)
		}
		va, vu, err := sshcerts.Validity(&after, &until, time.Now(), func(t time.Time) time.Time { return t.Add(time.Hour) })
		if !testkit.IsFieldError(err) {
			t.Fatalf("Validity: %v", err)
		}
		if err == nil && (!vu.After(va) || va.Unix() < 0) {
			t.Fatalf("accepted validity %v to %v", va, vu)
		}
	})
}
