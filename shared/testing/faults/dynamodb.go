// Package faults injects the failures of a network and of AWS services into tests against the
// local stack: DynamoDB's own refusals and errors with an SDK middleware on the real client
// (DynamoDB), and a misbehaving network between the service and its emulators with toxiproxy
// run in the test process (Proxy).
package faults

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Kind is one failure DynamoDB itself can answer a call with.
type Kind string

// The kinds DynamoDB injects.
const (
	// Throttle refuses the call before doing anything (ProvisionedThroughputExceededException).
	Throttle Kind = "throttle"
	// InternalBefore fails the call on DynamoDB's side without applying it (InternalServerError).
	InternalBefore Kind = "internal-before"
	// InternalAfter applies the call and then answers InternalServerError, as DynamoDB may.
	InternalAfter Kind = "internal-after"
	// TxConflict cancels a transaction for a conflict with another (TransactionCanceledException
	// with reason TransactionConflict; TransactionConflictException for a single-item write).
	TxConflict Kind = "tx-conflict"
)

// Network counts (in Injected) the attempts that failed on their own, without an injected
// kind: the network's faults (a proxy's toxics) and DynamoDB's own refusals.
const Network Kind = "attempt-failed"

// DynamoDB injects Kinds into a fraction Rate of the attempts of a real client's calls while
// it is on. Install it with Option; switch it with Set.
type DynamoDB struct {
	mu         sync.Mutex
	rate       float64
	kinds      []Kind
	writesOnly bool
	// Injected counts the failures injected, by kind.
	injected sync.Map // Kind → *atomic.Int64
}

// Set makes a fraction rate of attempts fail with one of kinds, chosen at random; rate 0 stops.
func (d *DynamoDB) Set(rate float64, kinds ...Kind) {
	d.mu.Lock()
	d.rate, d.kinds, d.writesOnly = rate, kinds, false
	d.mu.Unlock()
}

// SetWrites is Set for the calls that write only (reads are left alone).
func (d *DynamoDB) SetWrites(rate float64, kinds ...Kind) {
	d.mu.Lock()
	d.rate, d.kinds, d.writesOnly = rate, kinds, true
	d.mu.Unlock()
}

// Injected returns how many failures of each kind were injected, and how many attempts failed
// otherwise (Network).
func (d *DynamoDB) Injected() map[Kind]int64 {
	out := map[Kind]int64{}
	d.injected.Range(func(k, v any) bool { out[k.(Kind)] = v.(*atomic.Int64).Load(); return true })
	return out
}

// writeTargets are the X-Amz-Target values of the calls that write.
var writeTargets = map[string]bool{
	"DynamoDB_20120810.TransactWriteItems": true, "DynamoDB_20120810.PutItem": true, "DynamoDB_20120810.UpdateItem": true,
	"DynamoDB_20120810.DeleteItem": true, "DynamoDB_20120810.BatchWriteItem": true,
}

func (d *DynamoDB) pick(op string) (Kind, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.rate <= 0 || len(d.kinds) == 0 || (d.writesOnly && !writeTargets[op]) || rand.Float64() >= d.rate {
		return "", false
	}
	k := d.kinds[rand.IntN(len(d.kinds))]
	d.count(k)
	return k, true
}

func (d *DynamoDB) count(k Kind) {
	c, _ := d.injected.LoadOrStore(k, new(atomic.Int64))
	c.(*atomic.Int64).Add(1)
}

// Option installs the injector on a DynamoDB client (append it to store.Options.APIOptions'
// owner, or pass it to dynamodb.NewFromConfig). It runs last before the wire, inside the SDK's
// retries, so each attempt may fail and the SDK retries what it would retry from DynamoDB.
func (d *DynamoDB) Option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Finalize.Add(middleware.FinalizeMiddlewareFunc("faults.DynamoDB", d.handle), middleware.After)
	})
}

func (d *DynamoDB) handle(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	op := ""
	if req, ok := in.Request.(*smithyhttp.Request); ok {
		op = req.Header.Get("X-Amz-Target")
	}
	kind, ok := d.pick(op)
	if !ok {
		out, md, err := next.HandleFinalize(ctx, in)
		if err != nil {
			d.count(Network)
		}
		return out, md, err
	}
	switch kind {
	case Throttle:
		return middleware.FinalizeOutput{}, middleware.Metadata{}, answer(400, &types.ProvisionedThroughputExceededException{Message: aws.String("injected throttling")})
	case InternalBefore:
		return middleware.FinalizeOutput{}, middleware.Metadata{}, answer(500, &types.InternalServerError{Message: aws.String("injected internal error")})
	case InternalAfter:
		out, md, err := next.HandleFinalize(ctx, in)
		if err != nil {
			return out, md, err
		}
		return middleware.FinalizeOutput{}, md, answer(500, &types.InternalServerError{Message: aws.String("injected internal error after applying")})
	default:
		if op == "DynamoDB_20120810.TransactWriteItems" {
			return middleware.FinalizeOutput{}, middleware.Metadata{}, answer(400, &types.TransactionCanceledException{Message: aws.String("injected conflict"),
				CancellationReasons: []types.CancellationReason{{Code: aws.String("TransactionConflict")}}})
		}
		if op == "DynamoDB_20120810.PutItem" || op == "DynamoDB_20120810.UpdateItem" || op == "DynamoDB_20120810.DeleteItem" {
			return middleware.FinalizeOutput{}, middleware.Metadata{}, answer(400, &types.TransactionConflictException{Message: aws.String("injected conflict")})
		}
		return next.HandleFinalize(ctx, in)
	}
}

// answer is err as DynamoDB's HTTP answer with status carries it, so the SDK's retryer judges
// it as it would the real one.
func answer(status int, err error) error {
	return &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status, Header: http.Header{}}}, Err: err}
}
