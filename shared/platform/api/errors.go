package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"tunnelapi/shared/platform/derrors"
)

// Codes shared by every family. Family codes live with their families.
const (
	CodeNoAuthHeader    = "ERR_NGROK_200"
	CodeBadAuthHeader   = "ERR_NGROK_201"
	CodeNotAKey         = "ERR_NGROK_202"
	CodeUnknownKey      = "ERR_NGROK_203"
	CodeSuspended       = "ERR_NGROK_205"
	CodeAuthtokenAsKey  = "ERR_NGROK_206"
	CodeKeyIDAsKey      = "ERR_NGROK_207"
	CodeContentType     = "ERR_NGROK_210"
	CodeUnparseableBody = "ERR_NGROK_213"
	CodeUnknownField    = "ERR_NGROK_214"
	CodeBadFieldValue   = "ERR_NGROK_215"
	CodeBadVersion      = "ERR_NGROK_217"
	CodeIPRestricted    = "ERR_NGROK_220"
	CodeBadBeforeID     = "ERR_NGROK_223"
	CodeRateLimited     = "ERR_NGROK_226"
	CodeUnknownParam    = "ERR_NGROK_231"
	CodeBadLimit        = "ERR_NGROK_233"
	CodeBadTimestamp    = "ERR_NGROK_241"
	CodeBadFilter       = "ERR_NGROK_250"
	CodeEmptyUpdate     = "ERR_NGROK_606"
	CodeOwnerNeedsAdmin = "ERR_NGROK_630"
	CodeBodyTooLarge    = "ERR_NGROK_215"
	CodeTooConcurrent   = "ERR_NGROK_225"
	CodeUnavailable     = "ERR_NGROK_1501"
	CodeOutcomeUnknown  = "ERR_NGROK_1502"
	codeInternal        = "ERR_NGROK_500"
)

// Error is a failure the client sees in the error envelope,
// {"error_code","status_code","msg","details"}: status_code equals the HTTP status, details is a
// flat string map that always has operation_id, and field when one input is at fault. Field
// names the offending input (a body field, query parameter or header). Not found is 404
// "Resource not found" without a code (ErrNotFound). Anything that is not an *Error (found with
// errors.As, so wrapped ones keep their status) is answered by byCause, or is an opaque 500 whose
// cause is only logged.
type Error struct {
	Status int
	Code   string
	Msg    string
	Field  string
	// Details adds flat string entries to the envelope's details map.
	Details map[string]string
	// RetryAfter, when positive, is sent as the Retry-After header (seconds).
	RetryAfter int
}

// Error returns the message with its code, for logs.
func (e *Error) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("%d: %s", e.Status, e.Msg)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Msg)
}

// BadRequest returns a 400 with code naming field in its message and details.
func BadRequest(code, field, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: code, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Invalid returns a 400 ERR_NGROK_215 (bad field value) naming field.
func Invalid(field, format string, args ...any) *Error {
	return BadRequest(CodeBadFieldValue, field, format, args...)
}

// Forbidden returns a 403 with code.
func Forbidden(code, format string, args ...any) *Error {
	return &Error{Status: http.StatusForbidden, Code: code, Msg: fmt.Sprintf(format, args...)}
}

// ErrNotFound is the platform's 404: no error code, message "Resource not found".
var ErrNotFound = &Error{Status: http.StatusNotFound, Msg: "Resource not found"}

// TooConcurrent returns the 429 ERR_NGROK_225 ("Too many concurrent API requests for the
// account", the platform's own code) with Retry-After for a write that kept losing to other
// requests writing the same items until its retries were spent: nothing was changed, and the
// same request may simply be sent again.
func TooConcurrent(format string, args ...any) *Error {
	return &Error{Status: http.StatusTooManyRequests, Code: CodeTooConcurrent, RetryAfter: retryAfterSeconds, Msg: fmt.Sprintf(format, args...)}
}

// AsError returns err as an *Error when it is one (or wraps one), or as the answer the table of
// dependency failures (byCause) gives it.
func AsError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	for _, c := range byCause {
		if errors.Is(err, c.cause) {
			return c.answer, true
		}
	}
	return nil, false
}

// retryAfterSeconds is the Retry-After of an answer to a dependency's failure: DynamoDB's
// throttling and a lost connection both usually clear within a second.
const retryAfterSeconds = 1

// byCause is the one table from errors that are not *Error to what the client sees. The first
// entry whose cause errors.Is finds wins; anything else is the opaque 500.
//
// A request the table could not serve in time (unreachable, throttled, failed on its side, no
// answer before the deadline: derrors.ErrUnavailable, context.DeadlineExceeded) is 503
// ERR_NGROK_1501 with Retry-After and retry_after in details, and changed nothing. 1501 is the
// hosted platform's own code for "some operations unavailable": a client written for the
// platform already treats it as transient rather than as a fault of its request, which the
// platform's 5xx codes for specific features would not say, and a generic 500 would hide. A
// write sent whose answer was lost (derrors.ErrOutcomeUnknown) is 503 ERR_NGROK_1502, a code the
// platform does not use, so a client can tell "nothing changed" from "may have changed": it
// reads the resource, or repeats the request (a create with the same Idempotency-Key creates at
// most one resource). Every request runs under one deadline, its function's timeout
// (Server.HandleWithin; the Lambda context's) less ReplyMargin, which bounds every SDK call and
// retry under it (package store), so the 503 is written before the function would be stopped.
var byCause = []struct {
	cause  error
	answer *Error
}{
	{derrors.ErrOutcomeUnknown, &Error{Status: http.StatusServiceUnavailable, Code: CodeOutcomeUnknown, RetryAfter: retryAfterSeconds,
		Msg: "The change may or may not have been made: the database did not answer in time. Read the resource to see, or send the request again (a create with the same " +
			"Idempotency-Key creates at most one resource)."}},
	{derrors.ErrUnavailable, unavailable},
	{context.DeadlineExceeded, unavailable},
}

// unavailable is the answer to a request a dependency failed: nothing was changed.
var unavailable = &Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, RetryAfter: retryAfterSeconds,
	Msg: "The service is temporarily unavailable: the database could not be reached in time or throttled the request. Nothing was changed; retry after the time in Retry-After."}

// setRetryAfter puts e's Retry-After on h.
func (e *Error) setRetryAfter(h http.Header) {
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
}

// envelope is the wire form of an error: status_code must equal the HTTP status and
// details must be a flat string map that always carries the operation id.
type envelope struct {
	ErrorCode  string            `json:"error_code,omitempty"`
	StatusCode int               `json:"status_code"`
	Msg        string            `json:"msg"`
	Details    map[string]string `json:"details"`
}

func (e *Error) envelope(opID string) envelope {
	d := map[string]string{"operation_id": opID}
	for k, v := range e.Details {
		d[k] = v
	}
	if e.Field != "" {
		d["field"] = e.Field
	}
	if e.RetryAfter > 0 {
		d["retry_after"] = strconv.Itoa(e.RetryAfter)
	}
	return envelope{ErrorCode: e.Code, StatusCode: e.Status, Msg: e.Msg, Details: d}
}

// internal is what a client sees for any failure that is not an *Error: opaque by design.
var internal = &Error{Status: http.StatusInternalServerError, Code: codeInternal,
	Msg: "An internal server error occurred. Quote the operation id when reporting it."}

// WriteError writes err in the error envelope of operation op, with its status: an *Error as it
// is, anything else as the opaque 500. It returns the status written. Routes outside the
// tenants' API (the operator's) answer errors through it.
func WriteError(w http.ResponseWriter, op string, err error) int {
	e, ok := AsError(err)
	if !ok {
		e = internal
	}
	e.setRetryAfter(w.Header())
	writeJSON(w, e.Status, e.envelope(op))
	return e.Status
}
