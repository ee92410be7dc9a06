// Package coldstart measures what DESIGN.md property 11 promises: each function's zip is small
// and its time from exec to its first poll of the Lambda Runtime API is close to that of a
// hello-world aws-lambda-go binary built with the same flags.
package coldstart

import (
	"archive/zip"
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"tunnelapi/shared/app"
	"tunnelapi/shared/testing/benchkit"
)

// buildFlags are the Makefile's Lambda build flags.
var buildFlags = []string{"-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w"}

func build(t testing.TB, goarch, pkg, out string) {
	t.Helper()
	cmd := exec.Command("go", append(append([]string{"build"}, buildFlags...), "-o", out, pkg)...)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, b)
	}
}

// TestZipSizes builds every function as `make build` does (arm64) and checks each zip ≤ 5 MB.
func TestZipSizes(t *testing.T) {
	if os.Getenv("ZIP_CHECK") == "" {
		t.Skip("builds every function for arm64: run by make bench (ZIP_CHECK=1)")
	}
	dir := t.TempDir()
	for _, fn := range functionDirs() {
		bin := filepath.Join(dir, fn)
		build(t, "arm64", "./functions/"+fn, bin)
		size := zipSize(t, bin)
		t.Logf("%-28s zip %7d bytes", fn, size)
		if size > 5<<20 {
			t.Errorf("%s zip is %d bytes, over 5 MB", fn, size)
		}
	}
}

// functionDirs lists every function's folder: the HTTP families and the workers.
func functionDirs() []string {
	var out []string
	for _, f := range app.Functions() {
		out = append(out, f.Dir)
	}
	for _, w := range app.Workers {
		out = append(out, w.Dir)
	}
	return out
}

func zipSize(t testing.TB, bin string) int {
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("bootstrap")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(b)
	zw.Close()
	return buf.Len()
}

// runtimeStub is a minimal Lambda Runtime API: it notes when the first poll arrives and then
// holds the poll open (no invocation is ever delivered).
type runtimeStub struct {
	addr   string
	polled chan struct{}
	srv    *http.Server
}

func newStub(t testing.TB) *runtimeStub {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &runtimeStub{addr: ln.Addr().String(), polled: make(chan struct{}, 16)}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.polled <- struct{}{}
		<-r.Context().Done()
	})}
	go s.srv.Serve(ln)
	t.Cleanup(func() { s.srv.Close() })
	return s
}

// start execs bin and returns the time until its first poll of the stub.
func (s *runtimeStub) start(t testing.TB, bin string) time.Duration {
	cmd := exec.Command(bin)
	cmd.Env = []string{"AWS_LAMBDA_RUNTIME_API=" + s.addr, "TABLE_NAME=coldstart", "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=x", "EVENTS_QUEUE_URL=http://127.0.0.1:1/q", "HOME=/tmp",
		// The certificate worker names its DNS provider at start (no call is made).
		"HOSTED_ZONE_ID=ZCOLDSTART"}
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	select {
	case <-s.polled:
		return time.Since(begin)
	case <-time.After(10 * time.Second):
		t.Fatalf("%s never polled the runtime API", bin)
		return 0
	}
}

// BenchmarkColdStart reports, per function, the p50 from exec to first Runtime API poll divided
// by the hello-world baseline's, both built for this machine with the Lambda flags and run
// interleaved (goal: ≤ 1.5).
func BenchmarkColdStart(b *testing.B) {
	dir := b.TempDir()
	hello := filepath.Join(dir, "hello")
	build(b, runtime.GOARCH, "./infra/coldstart/hello", hello)
	stub := newStub(b)
	for _, fn := range functionDirs() {
		bin := filepath.Join(dir, fn)
		build(b, runtime.GOARCH, "./functions/"+fn, bin)
		b.Run(fn, func(b *testing.B) {
			benchkit.Compare(b, "start", func() { stub.start(b, bin) }, func() { stub.start(b, hello) })
		})
	}
}
