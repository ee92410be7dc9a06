package seal

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
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
		if _, err := l.Open(ctx, c.s, c.aad); err != ErrOpen {
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
