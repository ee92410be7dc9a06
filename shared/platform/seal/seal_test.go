package seal

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

func TestLocalRoundTripAndBinding(t *testing.T) {
	l, err := LoadKeyFile(filepath.Join(t.TempDir(), "k"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	aad := map[string]string{"account": "ac_1", "id": "cert_1"}
	secret := []byte("-----BEGIN PRIVATE KEY-----\nabc\n")
	s, err := l.Seal(ctx, secret, aad)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(s.Ciphertext, []byte("PRIVATE KEY")) || bytes.Contains(s.WrappedKey, []byte("PRIVATE")) {
		t.Fatal("plaintext visible in sealed value")
	}
	got, err := l.Open(ctx, s, aad)
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("open: %q %v", got, err)
	}
	cases := []struct {
		name string
		s    Sealed
		aad  map[string]string
	}{
		{"other aad", s, map[string]string{"account": "ac_2", "id": "cert_1"}},
		{"tampered", Sealed{KeyID: s.KeyID, WrappedKey: s.WrappedKey, Nonce: s.Nonce, Ciphertext: append([]byte{s.Ciphertext[0] ^ 1}, s.Ciphertext[1:]...)}, aad},
		{"short wrapped key", Sealed{KeyID: s.KeyID, WrappedKey: []byte{1}, Nonce: s.Nonce, Ciphertext: s.Ciphertext}, aad},
		{"other key id", Sealed{KeyID: "local:x", WrappedKey: s.WrappedKey, Nonce: s.Nonce, Ciphertext: s.Ciphertext}, aad},
	}
	for _, c := range cases {
		if _, err := l.Open(ctx, c.s, c.aad); !errors.Is(err, ErrOpen) {
			t.Errorf("%s: err %v, want ErrOpen", c.name, err)
		}
	}
	other := NewLocal(bytes.Repeat([]byte{7}, 32))
	if _, err := other.Open(ctx, s, aad); err == nil {
		t.Fatal("opened with another master key")
	}
}

func TestKeyFilePersists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k")
	first, err := LoadKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := first.Seal(context.Background(), []byte("x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := LoadKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := second.Open(context.Background(), s, nil); err != nil || string(got) != "x" {
		t.Fatalf("reloaded key does not open: %q %v", got, err)
	}
}

// A local key given as such (SEAL_LOCAL_KEY, for containers) is the key file's content: what
// one seals with the file, the other opens; with neither a KMS key nor a local key, New seals
// with the key file once the process uses key files, and refuses before. (Package config
// refuses a malformed SEAL_LOCAL_KEY without echoing it.)
func TestLocalKeyMatchesKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k")
	file, err := LoadKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	aad := ResourceContext("ac_1", "sshca_1")
	sealed, err := file.Seal(ctx, []byte("private"), aad)
	if err != nil {
		t.Fatal(err)
	}
	got, err := New(aws.Config{}, Settings{LocalKey: raw, KeyFile: filepath.Join(t.TempDir(), "other")}).Open(ctx, sealed, aad)
	if err != nil || string(got) != "private" {
		t.Fatalf("open with the local key: %q, %v", got, err)
	}
	if _, err := New(aws.Config{}, Settings{}).Open(ctx, sealed, aad); !errors.Is(err, errNoKey) {
		t.Fatalf("open with no key at all: %v, want %v", err, errNoKey)
	}
	got, err = New(aws.Config{}, Settings{KeyFile: path}).Open(ctx, sealed, aad)
	if err != nil || string(got) != "private" {
		t.Fatalf("open with the key file: %q, %v", got, err)
	}
	if _, err := New(aws.Config{}, Settings{KMSKeyID: "alias/x"}).Seal(ctx, []byte("x"), aad); err == nil || !strings.Contains(err.Error(), "kmsseal") {
		t.Errorf("a KMS key without KMS support linked: %v", err)
	}
}
