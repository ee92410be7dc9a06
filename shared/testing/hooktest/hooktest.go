// Package hooktest runs a family's hooks (Render, Prepare, Create, Update, Delete) without a
// table or a server: a request carrying a body, and checks of the rendered JSON and of the error
// a bad call gets. It imports only the platform's api package, so a family's in-package tests
// can use it.
package hooktest

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"

	"tunnelapi/shared/platform/api"
)

// Host is the host of every Request; rendered URIs are https://Host/....
const Host = "api.example.com"

// Request returns a request carrying body on Host, which is not a loopback address (so URIs
// are https).
func Request(body string) *api.Request {
	return &api.Request{HTTP: httptest.NewRequest("POST", "https://"+Host+"/", nil), Body: []byte(body)}
}

// WantCode fails t unless err is an *api.Error with code naming field.
func WantCode(t testing.TB, err error, code, field string) {
	t.Helper()
	var e *api.Error
	if !errors.As(err, &e) || e.Code != code || e.Field != field {
		t.Fatalf("error %v, want %s on %q", err, code, field)
	}
}

// WantJSON fails t unless v encodes to exactly want: members, their order and their values.
func WantJSON(t testing.TB, v any, want string) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Fatalf("rendered\n%s\nwant\n%s", b, want)
	}
}

// Refusal is one bad call of a hook and the error it must get.
type Refusal struct {
	name, code, field string
	run               func() error
}

// Case is the refusal named name: run must fail with code naming field.
func Case(name, code, field string, run func() error) Refusal {
	return Refusal{name: name, code: code, field: field, run: run}
}

// Refusals runs each case as a subtest and checks its error's code and field.
func Refusals(t *testing.T, cases []Refusal) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { WantCode(t, c.run(), c.code, c.field) })
	}
}
