package sshcerts_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/testing/testkit"
)

// sshDir is a temporary folder where OpenSSH's own tools run.
type sshDir struct {
	t   *testing.T
	dir string
}

func newSSHDir(t *testing.T) *sshDir {
	for _, tool := range []string{"ssh-keygen", "ssh", sshdPath} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (infra/tools.sh installs OpenSSH)", tool)
		}
	}
	return &sshDir{t: t, dir: t.TempDir()}
}

const sshdPath = "/usr/sbin/sshd"

func (d *sshDir) path(name string) string { return filepath.Join(d.dir, name) }

func (d *sshDir) write(name, content string) string {
	d.t.Helper()
	if err := os.WriteFile(d.path(name), []byte(content), 0o600); err != nil {
		d.t.Fatal(err)
	}
	return d.path(name)
}

func (d *sshDir) read(name string) string {
	d.t.Helper()
	b, err := os.ReadFile(d.path(name))
	if err != nil {
		d.t.Fatal(err)
	}
	return string(b)
}

// keygen makes a key pair name/name.pub of the given ssh-keygen type and returns the public key.
func (d *sshDir) keygen(name string, args ...string) string {
	d.t.Helper()
	d.run("ssh-keygen", append([]string{"-q", "-N", "", "-C", name + "@test", "-f", d.path(name)}, args...)...)
	return strings.TrimSpace(d.read(name + ".pub"))
}

// run runs a tool (in UTC, so ssh-keygen prints validity in UTC) and returns its output.
func (d *sshDir) run(tool string, args ...string) string {
	d.t.Helper()
	cmd := exec.Command(tool, args...)
	cmd.Dir = d.dir
	cmd.Env = append(os.Environ(), "TZ=UTC")
	out, err := cmd.CombinedOutput()
	if err != nil {
		d.t.Fatalf("%s %s: %v: %s", tool, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// certInfo is what `ssh-keygen -L` reports about a certificate.
type certInfo struct {
	Type, KeyID, SigningCA, ValidFrom, ValidTo string
	Principals, CriticalOptions, Extensions    []string
}

// inspect writes cert to a file and parses `ssh-keygen -L -f` of it.
func (d *sshDir) inspect(cert string) certInfo {
	d.t.Helper()
	f := d.write(fmt.Sprintf("inspect-%d-cert.pub", time.Now().UnixNano()), cert+"\n")
	var ci certInfo
	var list *[]string
	for _, raw := range strings.Split(d.run("ssh-keygen", "-L", "-f", f), "\n") {
		l := strings.TrimSpace(raw)
		if strings.HasPrefix(raw, strings.Repeat(" ", 16)) || strings.HasPrefix(raw, "\t\t") {
			if list != nil {
				*list = append(*list, l) // a value under the last list heading
			}
			continue
		}
		list = nil
		key, val, _ := strings.Cut(l, ":")
		val = strings.TrimSpace(val)
		switch key {
		case "Type":
			ci.Type = val
		case "Signing CA":
			ci.SigningCA = val
		case "Key ID":
			ci.KeyID = strings.Trim(val, `"`)
		case "Valid":
			ci.ValidFrom, ci.ValidTo, _ = strings.Cut(strings.TrimPrefix(val, "from "), " to ")
		case "Principals":
			list = &ci.Principals
		case "Critical Options":
			list = &ci.CriticalOptions
		case "Extensions":
			list = &ci.Extensions
		}
	}
	return ci
}

// fingerprint is the SHA256 fingerprint ssh-keygen prints for a public key.
func (d *sshDir) fingerprint(pub string) string {
	d.t.Helper()
	f := d.write(fmt.Sprintf("fp-%d.pub", time.Now().UnixNano()), pub+"\n")
	fields := strings.Fields(d.run("ssh-keygen", "-l", "-f", f))
	return fields[1]
}

// sshd is an OpenSSH server the test started on a loopback port.
type sshd struct {
	port int
	cmd  *exec.Cmd
	log  *syncLog
}

// syncLog is sshd's output, written by the process while the test reads it.
type syncLog struct{ testkit.LogCapture }

// String is the whole log.
func (l *syncLog) String() string { return string(l.Bytes()) }

// Len is the length of the log so far: a mark for since.
func (l *syncLog) Len() int { return len(l.Bytes()) }

// since is the log written after mark.
func (l *syncLog) since(mark int) string { return l.String()[mark:] }

// waitFor reports whether s appears in the log after mark within a few seconds (sshd may log a
// refusal just after the client gave up).
func (l *syncLog) waitFor(mark int, s string) bool {
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(l.since(mark), s) {
			return true
		}
	}
	return false
}

// startSSHD runs sshd in the foreground with an unprivileged configuration in the folder: only
// public key (certificate) authentication, users' certificates checked against userCA, and a
// forced command, so that a login needs no interactive shell. hostCert, when set, is presented
// alongside the host key. It is stopped when the test ends.
func (d *sshDir) startSSHD(userCA, hostKey, hostCert string) *sshd {
	d.t.Helper()
	if os.Geteuid() == 0 {
		// sshd refuses to start as root without its privilege separation folder.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			d.t.Fatal(err)
		}
	}
	port := testkit.FreePort(d.t)
	name := fmt.Sprintf("sshd-%d", port)
	d.write(name+"-ca.pub", userCA+"\n")
	cfg := []string{
		fmt.Sprintf("Port %d", port),
		"ListenAddress 127.0.0.1",
		"HostKey " + d.path(hostKey),
		"PidFile " + d.path(name+".pid"),
		"TrustedUserCAKeys " + d.path(name+"-ca.pub"),
		"AuthorizedKeysFile none",
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"UsePAM no",
		"StrictModes no",
		"PermitRootLogin prohibit-password",
		"ForceCommand /bin/true",
		"LogLevel VERBOSE",
	}
	if hostCert != "" {
		cfg = append(cfg, "HostCertificate "+d.path(hostCert))
	}
	d.write(name+".conf", strings.Join(cfg, "\n")+"\n")
	s := &sshd{port: port, log: &syncLog{}}
	s.cmd = exec.Command(sshdPath, "-D", "-e", "-f", d.path(name+".conf"))
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return s
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("sshd did not start: %s", s.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// login connects to s as the current user with the key name and its certificate, trusting
// host keys as knownHosts says (any host key when it is empty), and runs `true`. It returns
// nil when OpenSSH let the client in.
func (d *sshDir) login(s *sshd, key, cert, knownHosts string) error {
	d.t.Helper()
	d.write(key+"-cert.pub", cert+"\n")
	hostOpts := []string{"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null"}
	if knownHosts != "" {
		kh := d.write(fmt.Sprintf("known_hosts-%d", time.Now().UnixNano()), knownHosts+"\n")
		hostOpts = []string{"-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile=" + kh}
	}
	args := append([]string{"-F", "/dev/null", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none",
		"-o", "GlobalKnownHostsFile=/dev/null", "-o", "ConnectTimeout=10", "-o", "LogLevel=ERROR",
		"-i", d.path(key), "-o", "CertificateFile=" + d.path(key+"-cert.pub"), "-p", fmt.Sprint(s.port)}, hostOpts...)
	args = append(args, currentUser(d.t)+"@127.0.0.1", "true")
	cmd := exec.Command("ssh", args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

func currentUser(t *testing.T) string {
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return u.Username
}
