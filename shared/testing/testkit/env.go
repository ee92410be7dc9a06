package testkit

import (
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"tunnelapi/shared/platform/metrics"
)

// Require returns the values of the environment variables names, which point at services of
// the local stack. When one is unset it fails the test under `make test` (which sets
// REQUIRE_STACK) and skips it under a plain `go test` without a stack.
func Require(t testing.TB, names ...string) []string {
	t.Helper()
	values := make([]string, len(names))
	var missing []string
	for i, n := range names {
		if values[i] = os.Getenv(n); values[i] == "" {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		if os.Getenv("REQUIRE_STACK") != "" {
			t.Fatalf("%s not set but REQUIRE_STACK is: run through `make test`", strings.Join(missing, ", "))
		}
		t.Skipf("no %s: run `make test`", strings.Join(missing, ", "))
	}
	return values
}

// Logger is the logger tests give the service: silent unless TEST_LOG is set.
func Logger() *slog.Logger {
	if os.Getenv("TEST_LOG") != "" {
		return slog.Default()
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// Metrics is where a test stack's metric lines go: standard output with TEST_LOG set, else
// nowhere (tests that check them capture their own).
func Metrics() *metrics.Emitter {
	if os.Getenv("TEST_LOG") != "" {
		return metrics.Stdout
	}
	return &metrics.Emitter{W: io.Discard}
}
