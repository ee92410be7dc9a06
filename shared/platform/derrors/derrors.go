// Package derrors adds where an error happened to it, so that a logged 500 names the operation
// that failed. Errors are wrapped one way.
//
// A function that returns errors from the calls it makes names its operation once, in a
// deferred call at its top (package.Function, with the arguments that tell one call from
// another), and returns those errors as they are:
//
//	func (db *DB) Commit(ctx context.Context, t *Tx) (err error) {
//		defer derrors.Wrap(&err, "store.Commit")
//
// Inside such a function, an error gets more words only where the function makes several calls
// that can fail and the reader must know which one did — fmt.Errorf("create the dead-letter
// queue: %w", err) — naming the step, never the package or function again: the deferred Wrap
// does that. An error that leaves a function other than by its return (stored for later, passed
// to a callback, sent on a channel) is named the same way, as a step of the function it leaves.
//
// So no fmt.Errorf with %w starts with its package's name; a test beside this file fails when
// one does. The wrapped error keeps its identity for errors.Is and errors.As, so typed errors (a
// client error the HTTP layer renders, a sentinel) must be compared with those, never with ==.
package derrors

import (
	"errors"
	"fmt"
)

// Wrap prefixes *errp, when it is not nil, with the operation named by format and args.
func Wrap(errp *error, format string, args ...any) {
	if *errp != nil {
		*errp = fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), *errp)
	}
}

// ErrUnavailable marks a failure of a dependency (the table, the queue) to answer in time: it was
// unreachable, throttled the call, failed on its side or did not answer before the request's
// deadline, and nothing the call would have changed was changed. A later retry may succeed.
var ErrUnavailable = errors.New("dependency unavailable")

// ErrOutcomeUnknown marks a write that may have reached its dependency but whose answer never came
// back (a connection cut after the request was sent, a timeout, a failure on the dependency's
// side): it may or may not have been applied.
var ErrOutcomeUnknown = errors.New("write outcome unknown")
