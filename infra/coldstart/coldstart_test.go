package coldstart

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/app"
	"tunnelapi/shared/testing/benchkit"
)

// lambdaEnv and buildFlags are the Makefile's LAMBDA_ENV and LAMBDA_FLAGS (TestBuildIsTheMakefiles).
var (
	lambdaEnv  = []string{"GOOS=linux", "GOARCH=arm64", "GOARM64=v8.2", "CGO_ENABLED=0"}
	buildFlags = []string{"-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w"}
)

// build builds pkg of the module at root ("../.." for this checkout) for linux/goarch: for
// arm64 exactly as `make build` does, for another architecture (to run here) the same but for it.
func build(t testing.TB, root, goarch, pkg, out string) {
	t.Helper()
	cmd := exec.Command("go", append(append([]string{"build"}, buildFlags...), "-o", out, pkg)...)
	cmd.Dir = root
	env := lambdaEnv
	if goarch != "arm64" {
		env = []string{"GOOS=linux", "GOARCH=" + goarch, "CGO_ENABLED=0"}
	}
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, b)
	}
}

// The functions' build here is `make build`'s: a change to one fails until the other follows.
func TestBuildIsTheMakefiles(t *testing.T) {
	b, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, len(buildFlags))
	for i, f := range buildFlags {
		quoted[i] = f
		if strings.Contains(f, " ") {
			quoted[i] = strconv.Quote(f)
		}
	}
	for _, want := range []string{"LAMBDA_ENV := " + strings.Join(lambdaEnv, " "), "LAMBDA_FLAGS := " + strings.Join(quoted, " ")} {
		if !strings.Contains(string(b), "\n"+want+"\n") {
			t.Errorf("the Makefile has no line %q", want)
		}
	}
	if n := strings.Count(string(b), "$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS)"); n != 2 {
		t.Errorf("the Makefile builds functions %d times with $(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS), want 2 (build and sam build)", n)
	}
}

// TestZipSizes builds every function as `make build` does (arm64, zipped by infra/stack/zipfn;
// deployZips), logs each zip's size (a line "zip <function> <bytes> bytes" each, which make
// bench's report reads) and checks the goal: every zip is at most 5 MB.
func TestZipSizes(t *testing.T) {
	if os.Getenv("ZIP_CHECK") == "" {
		t.Skip("builds every function for arm64: run by make bench (ZIP_CHECK=1)")
	}
	zips := filepath.Dir(deployZips(t, "arm64"))
	for _, fn := range functionDirs() {
		fi, err := os.Stat(filepath.Join(zips, fn+".zip"))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("zip %s %d bytes", fn, fi.Size())
		if fi.Size() > 5<<20 {
			t.Errorf("%s zip is %d bytes, over 5 MB", fn, fi.Size())
		}
	}
}

// functionDirs lists every function's folder: the HTTP families, the workers and the operator's.
func functionDirs() []string {
	var out []string
	for _, f := range app.Functions() {
		out = append(out, f.Dir)
	}
	for _, w := range app.Workers {
		out = append(out, w.Dir)
	}
	return append(out, app.Operator.Dir)
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
		"HOSTED_ZONE_ID=ZCOLDSTART",
		// The operator refuses to start without a principal it may admit.
		"OPERATOR_PRINCIPALS=arn:aws:iam::123456789012:root"}
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
// by the hello-world baseline's, both built for this machine with the Lambda flags (the
// function's bootstrap taken out of its zip, deployZips) and run interleaved (goal: ≤ 1.5).
//
// Both binaries are written the same way (rewrite) just before they are timed: how a file came
// into the page cache (the linker's writes, an unzip, a read back from disk) changes the page
// faults of its every exec, and with them its start, by more than the goal's margin here.
func BenchmarkColdStart(b *testing.B) {
	dir := b.TempDir()
	built := filepath.Join(dir, "hello.built")
	build(b, "../..", runtime.GOARCH, "./infra/coldstart/hello", built)
	stub := newStub(b)
	tasks := deployZips(b, runtime.GOARCH)
	for _, fn := range functionDirs() {
		b.Run(fn, func(b *testing.B) {
			hello, bin := rewrite(b, built, filepath.Join(dir, "hello")), rewrite(b, filepath.Join(tasks, fn, "bootstrap"), filepath.Join(dir, fn))
			benchkit.Compare(b, "start", func() { stub.start(b, bin) }, func() { stub.start(b, hello) })
		})
	}
}

// rewrite writes a new file at dst with src's bytes in one write, as unzip writes a function's
// bootstrap, and returns dst.
func rewrite(b *testing.B, src, dst string) string {
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.Remove(dst); err != nil && !os.IsNotExist(err) {
		b.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		b.Fatal(err)
	}
	return dst
}

// No function links an SDK service's schemas package (the schema-based (de)serialization the
// SDK turns on service by service): its init builds every shape of the service at each cold
// start, in time and memory. go.mod holds the event worker's sink clients,
// and dynamodbstreams, at their last releases without one.
func TestNoFunctionLinksSDKSchemas(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-tags", "lambda.norpc", "./functions/...")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), lambdaEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		pkg := strings.TrimSpace(line)
		if strings.HasPrefix(pkg, "github.com/aws/aws-sdk-go-v2/") && strings.HasSuffix(pkg, "/schemas") {
			t.Errorf("a function links %s", pkg)
		}
	}
}
