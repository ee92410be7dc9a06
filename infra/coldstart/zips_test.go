package coldstart

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// zipCache is where deployZips keeps its builds, per architecture, under the repository root
// (git-ignored): go build relinks only a function whose code changed, and a zip is made again
// only for a binary that changed.
const zipCache = ".local/lambda"

// deployZips builds every function for linux/goarch in one go build, as `make build` does (for
// arm64 exactly; for another architecture the same but for it), zips each binary with
// infra/stack/zipfn and unzips the zip, as Lambda does with a deployment package. It returns
// the folder holding <function folder>/bootstrap, taken out of that function's zip.
func deployZips(t testing.TB, goarch string) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(root, zipCache, "linux_"+goarch)
	bins := filepath.Join(cache, "bin")
	if err := os.MkdirAll(bins, 0o755); err != nil {
		t.Fatal(err)
	}
	defer lock(t, filepath.Join(cache, ".lock"))()
	build(t, root, goarch, "./functions/...", bins+string(filepath.Separator))
	zipfn := filepath.Join(cache, "zipfn")
	cmd := exec.Command("go", "build", "-o", zipfn, "./infra/stack/zipfn")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build zipfn: %v\n%s", err, b)
	}
	for _, fn := range functionDirs() {
		bin, zipped, task := filepath.Join(bins, fn), filepath.Join(cache, fn+".zip"), filepath.Join(cache, "task", fn)
		sum := fileSum(t, bin)
		stamp := filepath.Join(cache, fn+".sum")
		if was, err := os.ReadFile(stamp); err == nil && string(was) == sum {
			if _, err := os.Stat(filepath.Join(task, "bootstrap")); err == nil {
				continue // zipped and unzipped from this very binary
			}
		}
		if b, err := exec.Command(zipfn, zipped, bin).CombinedOutput(); err != nil {
			t.Fatalf("zipfn %s: %v\n%s", fn, err, b)
		}
		unzip(t, zipped, task)
		if err := os.WriteFile(stamp, []byte(sum), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(cache, "task")
}

// lock takes an exclusive lock on the file at path, waiting for another test binary (make
// test's prebuild, or a concurrent package) that holds it, and returns its release.
func lock(t testing.TB, path string) func() {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatal(err)
	}
	return func() { f.Close() }
}

// Each function's deployment zip unpacks, as Lambda's provided runtimes need, to an executable
// file named bootstrap built for the machine it is zipped for. Needing no stack, it is also
// what make test runs first in the background, so the zips the emulator test starts are built
// while the static checks run.
func TestZipsHoldAnExecutableBootstrap(t *testing.T) {
	tasks := deployZips(t, runtime.GOARCH)
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[runtime.GOARCH]
	for _, fn := range functionDirs() {
		path := filepath.Join(tasks, fn, "bootstrap")
		fi, err := os.Stat(path)
		if err != nil {
			t.Errorf("%s: %v", fn, err)
			continue
		}
		if fi.Mode().Perm()&0o111 == 0 {
			t.Errorf("%s: bootstrap has mode %v, not executable", fn, fi.Mode())
		}
		f, err := elf.Open(path)
		if err != nil {
			t.Errorf("%s: bootstrap is not an ELF executable: %v", fn, err)
			continue
		}
		if f.Machine != want || f.Type != elf.ET_EXEC {
			t.Errorf("%s: bootstrap is %v %v, want %v ET_EXEC", fn, f.Machine, f.Type, want)
		}
		f.Close()
	}
}

// fileSum is the SHA-256 of the file at path, in hex.
func fileSum(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// unzip replaces folder dir with the files of the zip at path, with the modes the zip records
// (as Lambda unpacks a deployment package: a bootstrap not marked executable does not run).
func unzip(t testing.TB, path, dir string) {
	t.Helper()
	r, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range r.File {
		out := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		_, err = io.Copy(&buf, rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s in %s: %v", f.Name, path, err)
		}
		if err := os.WriteFile(out, buf.Bytes(), f.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}
