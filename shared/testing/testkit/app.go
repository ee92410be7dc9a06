package testkit

import (
	"sort"
	"strings"
	"testing"

	"tunnelapi/shared/app"
)

// App returns the test binary's shared stack (Shared) serving every family of the application,
// as the local server and the deployed functions do.
func App(tb testing.TB) *Stack {
	tb.Helper()
	return Shared(tb, app.Families...)
}

// AppAccount returns App's stack and a fresh account on it: the opening of most tests.
func AppAccount(tb testing.TB) (*Stack, *Account) {
	tb.Helper()
	s := App(tb)
	return s, s.NewAccount(tb)
}

// BenchAppAccount is AppAccount for a benchmark that times requests against their bare
// DynamoDB calls: App's families on a stack of the benchmark's own (for its lifetime) and a
// fresh account on it. Its handlers' lines go where Metrics sends them and into no
// usage.Aggregator (its Usage is nil): a function only writes its usage line to its log, which
// the usage worker sums elsewhere, so summing them in the test process is test work that a
// timed request must not include.
func BenchAppAccount(b *testing.B) (*Stack, *Account) {
	b.Helper()
	s := start(b, false, false, app.Families)
	return s, s.NewAccount(b)
}

// App returns the package's shared stack serving every family of the application (App),
// capturing its logs for the final scan.
func (s *SecretSuite) App(tb testing.TB) *Stack {
	tb.Helper()
	return s.Start(tb, app.Families...)
}

// AppAccount returns the suite's stack (App) and a fresh account on it.
func (s *SecretSuite) AppAccount(tb testing.TB) (*Stack, *Account) {
	tb.Helper()
	st := s.App(tb)
	return st, st.NewAccount(tb)
}

// AppTwoAccounts returns App's stack and two fresh accounts on it, for tests of what one
// account must not see or touch of the other's.
func AppTwoAccounts(tb testing.TB) (*Stack, *Account, *Account) {
	tb.Helper()
	s := App(tb)
	return s, s.NewAccount(tb), s.NewAccount(tb)
}

// FunctionRoutes are the routes f's families declare (resource.Descriptor.Routes), sorted.
func FunctionRoutes(f app.Function) []string {
	var out []string
	for _, d := range f.Families {
		out = append(out, d.Routes()...)
	}
	sort.Strings(out)
	return out
}

// AppRoutes is every route of every function, in a stable order.
func AppRoutes() []string {
	var out []string
	for _, f := range app.Functions() {
		out = append(out, FunctionRoutes(f)...)
	}
	return out
}

// Collections returns the collection paths (no path parameter) served with method.
func Collections(method string) []string {
	var out []string
	for _, f := range app.Functions() {
		for _, route := range FunctionRoutes(f) {
			m, path, _ := strings.Cut(route, " ")
			if m == method && !strings.Contains(path, "{") {
				out = append(out, path)
			}
		}
	}
	return out
}
