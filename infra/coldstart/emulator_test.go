package coldstart

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/testing/testkit"
)

// emulatorPath is the official Lambda Runtime Interface Emulator, pinned by go.mod's tool
// directive and built (once, then cached) by the go command.
func emulatorPath(t testing.TB) string {
	t.Helper()
	cmd := exec.Command("go", "tool", "-n", "aws-lambda-rie")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go tool -n aws-lambda-rie: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// emulator is one function's execution environment: the Runtime Interface Emulator running the
// function's bootstrap as Lambda's provided.al2023 runtime does, on ports of its own.
type emulator struct {
	url string          // the invocation endpoint
	out *metrics.Buffer // the emulator's and the function's output
	cmd *exec.Cmd
}

// startEmulator runs rie with task (the unzipped deployment package) as its working folder and
// ./bootstrap as the runtime, with exactly env as the environment (the emulator hands its own to
// the function, as Lambda gives a function only its configuration). It returns once the
// emulator accepts invocations; the runtime starts on the first, as Lambda's does on demand.
// An emulator that exits before it listens (a port taken since it was chosen) is started
// again on other ports.
func startEmulator(t testing.TB, rie, task string, env []string) *emulator {
	t.Helper()
	for attempt := 1; ; attempt++ {
		e, exited := tryEmulator(t, rie, task, env)
		if e != nil {
			return e
		}
		if attempt == 3 {
			t.Fatalf("the emulator exited before it listened, %d times: %s", attempt, exited)
		}
	}
}

// tryEmulator starts the emulator once: it returns it listening, or nil and its output when it
// exited first.
func tryEmulator(t testing.TB, rie, task string, env []string) (*emulator, string) {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	e := &emulator{url: "http://" + addr + "/2015-03-31/functions/function/invocations", out: &metrics.Buffer{}}
	e.cmd = exec.Command(rie, "--runtime-interface-emulator-address", addr, "--runtime-api-address", fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t)), "./bootstrap")
	e.cmd.Dir, e.cmd.Env, e.cmd.Stdout, e.cmd.Stderr = task, env, e.out, e.out
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { e.cmd.Wait(); close(exited) }()
	stop := func() {
		e.cmd.Process.Kill()
		<-exited
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			return nil, e.out.String()
		default:
		}
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			t.Cleanup(func() {
				stop()
				if t.Failed() {
					t.Logf("emulator output:\n%s", e.out)
				}
			})
			return e, ""
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("the emulator never listened on %s: %v\n%s", addr, err, e.out)
		}
	}
}

// invoke sends payload as a synchronous invocation and returns the function's response; a
// function error (an errorType in the answer) fails the test.
func (e *emulator) invoke(t testing.TB, payload []byte) []byte {
	t.Helper()
	res, err := http.Post(e.url, "application/json", bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || bytes.Contains(body, []byte(`"errorType"`)) {
		t.Fatalf("invocation: status %d: %s", res.StatusCode, body)
	}
	return body
}

// lambdaEnvironment is what Lambda sets for a function besides its configured variables
// (fn, its logical id; the template's timeout in seconds and memory in MB), with this stack's
// region and credentials standing in for the execution role's.
func lambdaEnvironment(fn string, timeout, memory int) []string {
	get := func(name, fallback string) string {
		if v := os.Getenv(name); v != "" {
			return v
		}
		return fallback
	}
	region := get("AWS_REGION", "us-east-1")
	return []string{
		"AWS_LAMBDA_FUNCTION_NAME=" + fn,
		fmt.Sprintf("AWS_LAMBDA_FUNCTION_TIMEOUT=%d", timeout),
		fmt.Sprintf("AWS_LAMBDA_FUNCTION_MEMORY_SIZE=%d", memory),
		"AWS_REGION=" + region, "AWS_DEFAULT_REGION=" + region,
		"AWS_ACCESS_KEY_ID=" + get("AWS_ACCESS_KEY_ID", "local"),
		"AWS_SECRET_ACCESS_KEY=" + get("AWS_SECRET_ACCESS_KEY", "local"),
		"TZ=:UTC", "PATH=/usr/local/bin:/usr/bin:/bin",
	}
}
