package testkit

import (
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// SSHPublicKey returns a fresh ed25519 public key in authorized-keys form with a comment: SSH
// credentials hold a key once across accounts, so every test makes its own.
func SSHPublicKey() string {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic("testkit: entropy source failed: " + err.Error())
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		panic("testkit: " + err.Error())
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp))) + " test@testkit"
}

// SSHKeygen makes a key pair with OpenSSH's ssh-keygen (args choose the type and size, such as
// "-t", "rsa", "-b", "2048") and returns the public key file's text as ssh-keygen wrote it.
func SSHKeygen(t testing.TB, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Fatal("ssh-keygen is not installed (infra/tools.sh installs OpenSSH)")
	}
	f := filepath.Join(t.TempDir(), "key")
	if out, err := exec.Command("ssh-keygen", append([]string{"-q", "-N", "", "-C", "test@ssh-keygen", "-f", f}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen %s: %v: %s", strings.Join(args, " "), err, out)
	}
	pub, err := os.ReadFile(f + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return string(pub)
}
