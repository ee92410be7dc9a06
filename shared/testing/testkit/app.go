package testkit

import (
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
