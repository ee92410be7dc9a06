package testkit

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// LocalServer is the local all-in-one server (infra/local's serve) as a test runs it: as make
// run starts it, but on its own port, frps ports, state directory, table and queues, so that it
// meets neither make run nor another test.
type LocalServer struct {
	// Bin is the server's binary.
	Bin string
	// Dir is its STATE_DIR, where it writes admin.token, seal.key, frps.toml and frpc.toml.
	Dir string
	// Port is its HTTP port; FRPBindPort and FRPVhostPort are frps's agent and HTTP ports.
	Port, FRPBindPort, FRPVhostPort int
	// Name is its table's name and its queues' prefix.
	Name string
	// Env is the environment each Start, and any other command of Bin, runs with: the test's,
	// with the above and no queue URL of the caller's.
	Env []string
}

// BuildLocalServer builds infra/local from the checkout at root and returns NewLocalServer of
// the binary.
func BuildLocalServer(t testing.TB, root, name string) *LocalServer {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "local")
	build := exec.Command("go", "build", "-o", bin, "./infra/local")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the local server: %v\n%s", err, out)
	}
	return NewLocalServer(t, bin, name)
}

// NewLocalServer is bin's server on three free ports and a fresh state directory, with its
// table and queue prefix named name-<port>.
func NewLocalServer(t testing.TB, bin, name string) *LocalServer {
	t.Helper()
	ports := freePorts(t, 3)
	l := &LocalServer{Bin: bin, Dir: t.TempDir(), Port: ports[0], FRPBindPort: ports[1], FRPVhostPort: ports[2]}
	l.Name = fmt.Sprint(name, "-", l.Port)
	l.Env = append(os.Environ(), fmt.Sprint("PORT=", l.Port), "STATE_DIR="+l.Dir, "SEAL_KEY_FILE="+filepath.Join(l.Dir, "seal.key"),
		"TABLE_NAME="+l.Name, "QUEUE_PREFIX="+l.Name, fmt.Sprint("FRP_BIND_PORT=", l.FRPBindPort), fmt.Sprint("FRP_VHOST_HTTP_PORT=", l.FRPVhostPort),
		"EVENTS_QUEUE_URL=", "EVENTS_DLQ_URL=", "CERT_JOBS_QUEUE_URL=", "CERT_JOBS_DLQ_URL=")
	return l
}

// freePorts returns n distinct local TCP ports nothing listens on (at the moment they are
// asked).
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close() // held until all are chosen, so that they differ
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// URL is the server's base URL.
func (l *LocalServer) URL() string { return fmt.Sprint("http://127.0.0.1:", l.Port) }

// Token is the admin token the server wrote at its first start.
func (l *LocalServer) Token(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(l.Dir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// startPatience is how long a start may take before the server answers: a loaded machine
// building and starting several servers at once is slow.
const startPatience = 2 * time.Minute

// Start runs the server with Env and extra (which win over it) and returns once it answers
// HTTP on its port, or fails the test when it exits or is silent for two minutes first. The
// process dies with the test binary, and is stopped (Stop) when the test ends.
func (l *LocalServer) Start(t testing.TB, extra ...string) *LocalProcess {
	t.Helper()
	p := &LocalProcess{cmd: exec.Command(l.Bin, "serve"), done: make(chan struct{})}
	p.cmd.Env = append(append([]string{}, l.Env...), extra...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.Stop(30 * time.Second) })
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(startPatience)
	for {
		res, err := client.Get(l.URL() + "/")
		if err == nil {
			res.Body.Close()
			return p
		}
		select {
		case <-p.done:
			t.Fatalf("the local server exited before answering: %v\n%s", p.err, p.Output())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the local server did not answer on %s within %s:\n%s", l.URL(), startPatience, p.Output())
		}
	}
}

// LocalProcess is a started LocalServer.
type LocalProcess struct {
	cmd  *exec.Cmd
	out  SyncBuffer
	done chan struct{}
	err  error // the exit's, once done is closed
}

// Output is what the process printed so far, stdout and stderr.
func (p *LocalProcess) Output() string { return p.out.String() }

// Line waits up to patience for a line of the output that re matches and returns its
// submatches.
func (p *LocalProcess) Line(t testing.TB, re *regexp.Regexp, patience time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		sc := bufio.NewScanner(strings.NewReader(p.Output()))
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the local server printed no line matching %s within %s:\n%s", re, patience, p.Output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Wait waits for the process to exit and returns how it exited.
func (p *LocalProcess) Wait() error {
	<-p.done
	return p.err
}

// Stop stops the process as Ctrl-C does (SIGINT) and waits up to patience for it to exit,
// then kills it. It returns nil for a clean exit, an error when it exited otherwise or had to
// be killed; a process already gone returns how it exited.
func (p *LocalProcess) Stop(patience time.Duration) error {
	select {
	case <-p.done:
		return p.err
	default:
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
		return p.err
	case <-time.After(patience):
		p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("the local server did not stop within %s of SIGINT: killed", patience)
	}
}

// SyncBuffer is a bytes.Buffer that the goroutines exec copies a process's output with and a
// reading test may use at once.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is what was written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
