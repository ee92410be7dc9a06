package terraform

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	// clientsDir is ../shared/clients beside the checkout, as seen from this package.
	clientsDir = "../../../shared/clients"
	// cacheDir holds the built tools, under the checkout's .local/.
	cacheDir = "../../.local/terraform"
	// terraformVersion is the last MPL-2.0 release of Terraform.
	terraformVersion = "v1.5.7"

	providerArchive = "terraform-provider-ngrok.tar.gz"
	clientArchive   = "ngrok-api-go-v8.0.0.tar.gz"
)

// toolset is what the tests run: Terraform, the folder holding the provider's binary (for
// dev_overrides), the provider's compiled acceptance tests and its unpacked source.
type toolset struct {
	Terraform, PluginDir, Acceptance, Source string
}

// examples is the provider's folder of examples.
func (ts toolset) examples() string { return filepath.Join(ts.Source, "examples") }

var built = sync.OnceValues(buildTools)

// tools returns the built toolset, building what the cache lacks; it skips the test when the
// provider's source is not beside the checkout.
func tools(t *testing.T) toolset {
	t.Helper()
	if _, err := os.Stat(filepath.Join(clientsDir, providerArchive)); err != nil {
		t.Skip("../shared/clients is not beside the checkout: the official Terraform provider is not driven")
	}
	ts, err := built()
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// The tools the other tests run are built and run: Terraform reports the version it was built
// from, and the provider and its acceptance tests are executables. Needing no stack, it is also
// what make test runs first in the background, so the build overlaps the static checks.
func TestToolsBuild(t *testing.T) {
	ts := tools(t)
	out, err := exec.Command(ts.Terraform, "version", "-json").Output()
	if err != nil {
		t.Fatalf("terraform version: %v", err)
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &v); err != nil || "v"+v.Version != terraformVersion {
		t.Errorf("terraform version -json printed %s (%v), want terraform_version %q", out, err, strings.TrimPrefix(terraformVersion, "v"))
	}
	for _, bin := range []string{filepath.Join(ts.PluginDir, "terraform-provider-ngrok"), ts.Acceptance} {
		if fi, err := os.Stat(bin); err != nil || fi.Mode().Perm()&0o111 == 0 {
			t.Errorf("%s is not an executable (%v)", bin, err)
		}
	}
}

// buildTools returns the toolset from the cache, building each part it lacks: Terraform under
// its version, the provider under a hash of both archives and the Go version, so a changed
// archive or toolchain builds again and a fresh machine builds once.
func buildTools() (toolset, error) {
	cache, err := filepath.Abs(cacheDir)
	if err != nil {
		return toolset{}, err
	}
	tfDir := filepath.Join(cache, "terraform-"+terraformVersion)
	if err := cached(tfDir, func(tmp string) error {
		return run(tmp, []string{"GOBIN=" + tmp}, "go", "install", "github.com/hashicorp/terraform@"+terraformVersion)
	}); err != nil {
		return toolset{}, fmt.Errorf("building Terraform %s: %w", terraformVersion, err)
	}
	key, err := archivesKey()
	if err != nil {
		return toolset{}, err
	}
	provDir := filepath.Join(cache, "provider-"+key)
	if err := cached(provDir, buildProvider); err != nil {
		return toolset{}, fmt.Errorf("building the provider: %w", err)
	}
	return toolset{Terraform: filepath.Join(tfDir, "terraform"), PluginDir: filepath.Join(provDir, "bin"),
		Acceptance: filepath.Join(provDir, "bin", "provider.test"), Source: filepath.Join(provDir, "terraform-provider-ngrok")}, nil
}

// cached makes dir with make unless it exists: make fills a fresh folder beside it, which is
// then renamed into place, so an interrupted build leaves nothing that looks finished. Other
// versions beside it (provider-<other key>) are removed once the new one is in place; their
// lock files stay.
func cached(dir string, make func(tmp string) error) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	// One build at a time: a test binary that finds another building (make test's prebuild)
	// waits for it and then finds the folder made.
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	tmp, err := os.MkdirTemp(parent, ".build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	start := time.Now()
	if err := make(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "terraform: built %s in %s\n", filepath.Base(dir), time.Since(start).Round(time.Second))
	prefix, _, _ := strings.Cut(filepath.Base(dir), "-")
	stale, _ := filepath.Glob(filepath.Join(parent, prefix+"-*"))
	for _, s := range stale {
		if s != dir && !strings.HasSuffix(s, ".lock") {
			os.RemoveAll(s)
		}
	}
	return nil
}

// archivesKey is a hash of the two archives the provider is built from and the Go version.
func archivesKey() (string, error) {
	h := sha256.New()
	for _, name := range []string{providerArchive, clientArchive} {
		f, err := os.Open(filepath.Join(clientsDir, name))
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
	}
	io.WriteString(h, runtime.Version())
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// buildProvider unpacks both archives into dir, renames the Go client's module path from v8 to
// the v9 the provider requires, and builds the provider and its acceptance tests into dir/bin,
// as ../shared/clients/README.md says.
func buildProvider(dir string) error {
	for _, name := range []string{providerArchive, clientArchive} {
		archive, err := filepath.Abs(filepath.Join(clientsDir, name))
		if err != nil {
			return err
		}
		if err := run(dir, nil, "tar", "-xzf", archive); err != nil {
			return err
		}
	}
	client := filepath.Join(dir, "ngrok-api-go")
	if err := filepath.WalkDir(client, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if renamed := bytes.ReplaceAll(b, []byte("ngrok-api-go/v8"), []byte("ngrok-api-go/v9")); !bytes.Equal(renamed, b) {
			return os.WriteFile(path, renamed, d.Type().Perm()|0o600)
		}
		return nil
	}); err != nil {
		return err
	}
	src, bin := filepath.Join(dir, "terraform-provider-ngrok"), filepath.Join(dir, "bin")
	if err := run(src, nil, "go", "mod", "edit", "-replace", "github.com/ngrok/ngrok-api-go/v9=../ngrok-api-go"); err != nil {
		return err
	}
	if err := run(src, nil, "go", "build", "-o", filepath.Join(bin, "terraform-provider-ngrok"), "."); err != nil {
		return err
	}
	return run(src, nil, "go", "test", "-c", "-o", filepath.Join(bin, "provider.test"), "./internal/provider")
}

// run runs a command in dir with env added to the test's, returning its output with any failure.
// A go command builds the module it is in, whatever workspace is around.
func run(dir string, env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOWORK=off"), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}
