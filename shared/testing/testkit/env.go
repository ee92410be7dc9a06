package testkit

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/metrics"
)

// Env is the environment the services under test read (package config): the process's, with
// dummy AWS credentials and, where it sets none, a key file of the test stack's own that they
// seal with, as the local server does.
var Env = config.With(config.Env, map[string]string{
	"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
	"SEAL_KEY_FILE": filepath.Join(os.TempDir(), "tunnelapi-test-seal.key"),
})

// Config is the configuration load parses from Env as it is now (the stack's, and whatever
// the test set); a malformed value fails the test.
func Config[C any](t testing.TB, load func(config.Lookup) (C, error)) C {
	t.Helper()
	c, err := load(Env)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// settings are what the test support itself reads (REQUIRE_STACK, TEST_LOG), parsed once.
var settings = sync.OnceValue(func() config.Stack {
	s, err := config.LoadStack(config.Env)
	if err != nil {
		panic(fmt.Sprintf("testkit: %v", err))
	}
	return s
})

// Require returns the values of the environment variables names, which point at services of
// the local stack. When one is unset it fails the test under `make test` (which sets
// REQUIRE_STACK) and skips it under a plain `go test` without a stack.
func Require(t testing.TB, names ...string) []string {
	t.Helper()
	values := make([]string, len(names))
	var missing []string
	for i, n := range names {
		v, err := config.Value(config.Env, config.ByTests, n)
		if err != nil {
			t.Fatal(err)
		}
		if values[i] = v; v == "" {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		if settings().RequireStack {
			t.Fatalf("%s not set but REQUIRE_STACK is: run through `make test`", strings.Join(missing, ", "))
		}
		t.Skipf("no %s: run `make test`", strings.Join(missing, ", "))
	}
	return values
}

// Logger is the logger tests give the service: silent unless TEST_LOG is set.
func Logger() *slog.Logger {
	if settings().TestLog {
		return slog.Default()
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// Metrics is where a test stack's metric lines go: standard output with TEST_LOG set, else
// nowhere (tests that check them capture their own).
func Metrics() *metrics.Emitter {
	if settings().TestLog {
		return metrics.Stdout
	}
	return &metrics.Emitter{W: io.Discard}
}
