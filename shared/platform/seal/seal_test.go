package seal

import (
	"bytes"
	"context"
	"encoding/hex"
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

// SEAL_LOCAL_KEY is the key file's content in hex: what one seals with the file, the other
// opens; a malformed value fails every use without echoing the value.
func TestLocalKeyFromEnvMatchesKeyFile(t *testing.T) {
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
	t.Setenv("SEAL_KMS_KEY_ID", "")
	t.Setenv("SEAL_LOCAL_KEY", hex.EncodeToString(raw))
	got, err := FromEnv(aws.Config{}).Open(ctx, sealed, aad)
	if err != nil || string(got) != "private" {
		t.Fatalf("open with SEAL_LOCAL_KEY: %q, %v", got, err)
	}
	for _, bad := range []string{"zz" + hex.EncodeToString(raw)[2:], hex.EncodeToString(raw[:16])} {
		t.Setenv("SEAL_LOCAL_KEY", bad)
		_, err := FromEnv(aws.Config{}).Seal(ctx, []byte("x"), aad)
		if err == nil || !strings.Contains(err.Error(), "SEAL_LOCAL_KEY") || strings.Contains(err.Error(), bad) {
			t.Errorf("SEAL_LOCAL_KEY=%q: err %v, want one naming the variable but not its value", bad, err)
		}
	}
}
