package api_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"tunnelapi/shared/testing/testkit"
)

// root is the checkout, from this package; goClientArchive is the official Go client's source
// beside the checkout, and goClientDir where TestOfficialGoClient unpacks it:
// infra/goclient/go.mod replaces the client with that folder.
const (
	root            = "../../.."
	goClientArchive = "../shared/clients/ngrok-api-go-v8.0.0.tar.gz"
	goClientDir     = ".local/clients/v8"
)

// The official Go client works against the service: infra/goclient, a module of its own,
// drives its packages (kubernetes_operators: create, get, list, update, delete and
// GetBoundEndpoints) against this test's stack, with the stack's URL and an admin token in
// its environment. The client's source is unpacked from ../shared/clients/ once into .local/.
func TestOfficialGoClient(t *testing.T) {
	archive := filepath.Join(root, goClientArchive)
	if _, err := os.Stat(archive); err != nil {
		t.Skip("the official Go client's source is not beside the checkout (../shared/clients/)")
	}
	dir := filepath.Join(root, goClientDir)
	if _, err := os.Stat(filepath.Join(dir, "ngrok-api-go", "go.mod")); err != nil {
		// Unpacked into a fresh folder, then moved into place, so a failed or concurrent unpack
		// never leaves a partial client where the module expects one.
		tmp, err := os.MkdirTemp(filepath.Join(root, ".local"), "clients-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		if out, err := exec.Command("tar", "-xzf", archive, "-C", tmp).CombinedOutput(); err != nil {
			t.Fatalf("unpack %s: %v: %s", archive, err, out)
		}
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) {
			if _, serr := os.Stat(filepath.Join(dir, "ngrok-api-go", "go.mod")); serr != nil {
				t.Fatalf("move the client into %s: %v", dir, err)
			}
		}
	}
	s := testkit.App(t)
	a := s.NewAccount(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-v", "./...")
	cmd.Dir = filepath.Join(root, "infra", "goclient")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "NGROK_API_BASE_URL="+s.Server.URL, "NGROK_API_KEY="+a.Token)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("go test in infra/goclient:\n%s", out.Bytes())
	if err != nil {
		t.Fatalf("the official Go client's tests failed: %v", err)
	}
	if !bytes.Contains(out.Bytes(), []byte("--- PASS: TestKubernetesOperators")) {
		t.Fatal("TestKubernetesOperators did not pass (did it run?)")
	}
}
