package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"tunnelapi/shared/platform/derrors"
)

// The SDK's retries of one call. They run within the caller's deadline (the request's, which
// comes from the Lambda context): a read's attempt before the last gets at most half of the time
// left, so a connection that holds it without answering leaves time for another. A write's
// attempt may take all the time left: cut short, it would leave its transaction in progress,
// and its retry (with the same ClientRequestToken) could only wait for it; no retry
// starts with less than minRetryTime left; the pause between attempts is at most maxBackoff.
// There is no shared retry quota (the SDK's default token bucket): the deadline bounds what one
// request can spend, and a bucket drained by one burst of faults would fail the requests of the
// next second that would have succeeded.
const (
	maxAttempts  = 4
	maxBackoff   = 500 * time.Millisecond
	minRetryTime = 100 * time.Millisecond
)

// DependencyError is a DynamoDB call that failed for want of an answer: the table could not be
// reached in time, throttled the call or failed on its side. It is derrors.ErrOutcomeUnknown when
// the call was a write any attempt of which may have been applied, else derrors.ErrUnavailable.
// A refusal DynamoDB explains (a failed condition, a cancelled transaction, a bad request) is
// never one: those are answers.
type DependencyError struct {
	// Op is the DynamoDB operation ("TransactWriteItems").
	Op string
	// Unknown is set when the write may have been applied.
	Unknown bool
	Err     error
}

// Error implements error.
func (e *DependencyError) Error() string {
	what := "unavailable"
	if e.Unknown {
		what = "outcome unknown"
	}
	return fmt.Sprintf("store: DynamoDB %s %s: %v", e.Op, what, e.Err)
}

// Unwrap makes the error derrors.ErrUnavailable or derrors.ErrOutcomeUnknown, and the SDK's error.
func (e *DependencyError) Unwrap() []error {
	kind := derrors.ErrUnavailable
	if e.Unknown {
		kind = derrors.ErrOutcomeUnknown
	}
	return []error{kind, e.Err}
}

// throttled are the error codes with which DynamoDB refuses a call before doing anything.
var throttled = map[string]bool{
	"ProvisionedThroughputExceededException": true, "ThrottlingException": true, "RequestLimitExceeded": true,
}

// writes are the operations that change the table.
var writes = map[string]bool{
	"TransactWriteItems": true, "PutItem": true, "UpdateItem": true, "DeleteItem": true, "BatchWriteItem": true,
}

// callRecord is what the attempts of one call learnt: its operation, how many were made and
// whether any may have been applied.
type callRecord struct {
	op           atomic.Value // string
	attempts     atomic.Int32
	maybeApplied atomic.Bool
}

type callRecordKey struct{}

// notApplied reports whether an attempt that failed with err certainly changed nothing: DynamoDB
// answered with a refusal (throttling, a failed condition, a bad request), or the connection
// was never made.
func notApplied(err error) bool {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return throttled[ae.ErrorCode()] || ae.ErrorFault() == smithy.FaultClient
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// isAnswer reports whether err is DynamoDB's answer to the call rather than the want of one.
// TransactionInProgressException is not: it says an earlier attempt of the same transaction
// (the SDK's retries share its ClientRequestToken) has not finished, so it may yet be applied.
func isAnswer(err error) bool {
	var ae smithy.APIError
	if !errors.As(err, &ae) || throttled[ae.ErrorCode()] || ae.ErrorCode() == "TransactionInProgressException" {
		return false
	}
	return ae.ErrorFault() == smithy.FaultClient
}

// conditionRefusals are the answers a write's earlier attempt can cause by having been applied:
// the retry finds the item that attempt wrote and fails the condition it was written under.
var conditionRefusals = map[string]bool{"ConditionalCheckFailedException": true, "TransactionCanceledException": true}

// classify turns the final error of a call into a *DependencyError when it is not an answer, or
// when it is a refused condition after an attempt that may have been applied: that refusal may
// be the call's own write seen again, so what it did is unknown.
func classify(err error, rec *callRecord) error {
	if err == nil {
		return nil
	}
	op, _ := rec.op.Load().(string)
	unknown := writes[op] && rec.maybeApplied.Load()
	var ae smithy.APIError
	if isAnswer(err) && !(unknown && errors.As(err, &ae) && conditionRefusals[ae.ErrorCode()]) {
		return err
	}
	return &DependencyError{Op: op, Unknown: unknown, Err: err}
}

// dependencyMiddleware classifies every call's error (outermost) and bounds and records each of
// its attempts (right after the SDK's retry loop).
func dependencyMiddleware(stack *middleware.Stack) error {
	outer := middleware.InitializeMiddlewareFunc("store.Dependency", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		rec := &callRecord{}
		out, md, err := next.HandleInitialize(context.WithValue(ctx, callRecordKey{}, rec), in)
		return out, md, classify(err, rec)
	})
	attempt := middleware.FinalizeMiddlewareFunc("store.Attempt", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
		rec, _ := ctx.Value(callRecordKey{}).(*callRecord)
		op := awsmiddleware.GetOperationName(ctx)
		if rec != nil {
			rec.op.Store(op)
		}
		if err := ctx.Err(); err != nil {
			return middleware.FinalizeOutput{}, middleware.Metadata{}, err
		}
		if deadline, ok := ctx.Deadline(); ok && !writes[op] && rec != nil && rec.attempts.Add(1) < maxAttempts {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, time.Until(deadline)/2)
			defer cancel()
		}
		out, md, err := next.HandleFinalize(ctx, in)
		if err != nil && rec != nil && !notApplied(err) {
			rec.maybeApplied.Store(true)
		}
		return out, md, err
	})
	if err := stack.Initialize.Add(outer, middleware.Before); err != nil {
		return err
	}
	return stack.Finalize.Insert(attempt, "Retry", middleware.After)
}

// deadlineRetryer is the SDK's standard retryer that declines a retry when the caller's deadline
// leaves less than minRetryTime.
type deadlineRetryer struct{ aws.RetryerV2 }

func (r deadlineRetryer) GetRetryToken(ctx context.Context, opErr error) (func(error) error, error) {
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < minRetryTime {
		return nil, errors.New("store: no time left before the deadline for another attempt")
	}
	return r.RetryerV2.GetRetryToken(ctx, opErr)
}

// retryOptions configures the client's retries and its dependency middleware.
func retryOptions(o *dynamodb.Options) {
	o.Retryer = deadlineRetryer{retry.NewStandard(func(s *retry.StandardOptions) {
		s.MaxAttempts = maxAttempts
		s.MaxBackoff = maxBackoff
		s.RateLimiter = ratelimit.None
	})}
	o.APIOptions = append(o.APIOptions, dependencyMiddleware)
}
