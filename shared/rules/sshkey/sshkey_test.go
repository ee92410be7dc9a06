package sshkey

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

func authorized(t *testing.T, pub any) string {
	t.Helper()
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return string(ssh.MarshalAuthorizedKey(sp))
}

func TestParse(t *testing.T) {
	edPub, _, _ := ed25519.GenerateKey(rand.Reader)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	big, _ := rsa.GenerateKey(rand.Reader, 2048)
	ed := authorized(t, edPub)
	for _, c := range []struct {
		name, text, typ string
		min             int
	}{
		{"ed25519 with comment and options", `no-pty ` + strings.TrimSpace(ed) + " me@host\n", "ed25519", 2048},
		{"ecdsa", authorized(t, &ec.PublicKey), "ecdsa", 2048},
		{"rsa 2048 at 2048", authorized(t, &big.PublicKey), "rsa", 2048},
		{"rsa 1024 at 1024", authorized(t, &small.PublicKey), "rsa", 1024},
	} {
		if _, typ, err := Parse(c.text, c.min); err != nil || typ != c.typ {
			t.Errorf("%s: %q %v, want %s", c.name, typ, err, c.typ)
		}
	}
	for name, text := range map[string]string{
		"rsa 1024 at 2048": authorized(t, &small.PublicKey),
		"two keys":         ed + ed,
		"garbage":          "ssh-ed25519 !!!",
		"too long":         strings.Repeat("a", MaxBytes+1),
	} {
		if _, _, err := Parse(text, 2048); err == nil || errors.Is(err, ErrMissing) {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
	}
	if _, _, err := Parse(" \n", 2048); !errors.Is(err, ErrMissing) {
		t.Errorf("blank: %v, want ErrMissing", err)
	}
}
