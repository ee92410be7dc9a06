package store

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"tunnelapi/shared/platform/derrors"
)

// A call's final error is an answer, unavailable or of unknown outcome by what its attempts
// learnt: a refused condition is the table's answer unless an earlier attempt of the same write
// may have been applied, when it may be that write seen again.
func TestClassify(t *testing.T) {
	record := func(op string, maybeApplied bool) *callRecord {
		rec := &callRecord{}
		rec.op.Store(op)
		rec.maybeApplied.Store(maybeApplied)
		return rec
	}
	canceled := &types.TransactionCanceledException{Message: new("condition")}
	condition := &types.ConditionalCheckFailedException{Message: new("condition")}
	validation := &smithy.GenericAPIError{Code: "ValidationException", Fault: smithy.FaultClient}
	internal := &types.InternalServerError{Message: new("internal")}
	for _, c := range []struct {
		name string
		err  error
		rec  *callRecord
		want error // nil: the error itself
	}{
		{"a cancelled transaction", canceled, record("TransactWriteItems", false), nil},
		{"a cancelled transaction after an attempt that may have applied", canceled, record("TransactWriteItems", true), derrors.ErrOutcomeUnknown},
		{"a failed condition after an attempt that may have applied", condition, record("PutItem", true), derrors.ErrOutcomeUnknown},
		{"a bad request after an attempt that may have applied", validation, record("TransactWriteItems", true), nil},
		{"an internal error of a write", internal, record("TransactWriteItems", true), derrors.ErrOutcomeUnknown},
		{"an internal error of a write none of whose attempts applied", internal, record("TransactWriteItems", false), derrors.ErrUnavailable},
		{"an internal error of a read", internal, record("BatchGetItem", true), derrors.ErrUnavailable},
	} {
		got := classify(c.err, c.rec)
		switch {
		case c.want == nil && got != c.err:
			t.Errorf("%s: classified %v, want the answer itself", c.name, got)
		case c.want != nil && !errors.Is(got, c.want):
			t.Errorf("%s: classified %v, want %v", c.name, got, c.want)
		case c.want == derrors.ErrUnavailable && errors.Is(got, derrors.ErrOutcomeUnknown):
			t.Errorf("%s: classified %v, want unavailable only", c.name, got)
		}
	}
	if classify(nil, record("TransactWriteItems", true)) != nil {
		t.Error("no error classified as one")
	}
}
