// Package derrors adds where an error happened to it, so that a logged 500 names the operation
// that failed. Each function that returns errors from another layer wraps them once, in a
// deferred call at its top:
//
//	func (db *DB) Commit(ctx context.Context, t *Tx) (err error) {
//		defer derrors.Wrap(&err, "store.Commit")
//
// The wrapped error keeps its identity for errors.Is and errors.As, so typed errors (a client
// error the HTTP layer renders, a sentinel) must be compared with those, never with ==.
package derrors

import "fmt"

// Wrap prefixes *errp, when it is not nil, with the operation named by format and args.
func Wrap(errp *error, format string, args ...any) {
	if *errp != nil {
		*errp = fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), *errp)
	}
}
