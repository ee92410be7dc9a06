package usage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strings"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/store"
)

// Worker is the usage worker: the destination of every function's log group's subscription
// filter (metrics.UsageFilterPattern).
type Worker struct {
	DB  *store.DB
	Log *slog.Logger
	// Sources are the log groups whose lines it adds; nil admits every one (in-process tests
	// and benchmarks; FromConfig without a stack configured).
	Sources *Sources
}

// Sources are the log groups of one CloudFormation stack in one AWS account: the only ones
// whose usage lines the worker adds, whatever else is subscribed to it.
type Sources struct {
	// Owner is the account the log groups belong to (DEPLOYMENT_ACCOUNT_ID).
	Owner string
	// Stack is the stack's name (STACK_NAME).
	Stack string
}

// Admit reports whether a delivery from the log group logGroup of owner is of s: owner is
// s.Owner and the group is one CloudFormation made for the stack, named
// <stack>-<logical id>-<suffix> (the logical id and the suffix letters and digits, so that a
// stack whose name extends s.Stack with a hyphen is not s.Stack).
func (s *Sources) Admit(owner, logGroup string) bool {
	if s.Owner == "" || s.Stack == "" || owner != s.Owner {
		return false
	}
	rest, ok := strings.CutPrefix(logGroup, s.Stack+"-")
	if !ok {
		return false
	}
	id, suffix, ok := strings.Cut(rest, "-")
	return ok && alnum(id) && alnum(suffix)
}

// alnum reports whether s is a non-empty run of ASCII letters and digits.
func alnum(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}) < 0
}

// Decode reads a CloudWatch Logs subscription delivery (base64 of gzip of JSON) into the sums
// of its usage lines, each dated by its log event's timestamp, and the batch id the same
// delivery always gets. A control message (sent when a filter is created) has no lines.
func Decode(ev lambdaevents.CloudwatchLogsEvent) (batch string, s Sums, err error) {
	d, err := ev.AWSLogs.Parse()
	if err != nil {
		return "", nil, err
	}
	batch, s = decode(d)
	return batch, s, nil
}

// decode is Decode of a parsed delivery.
func decode(d lambdaevents.CloudwatchLogsData) (batch string, s Sums) {
	s = Sums{}
	if d.MessageType != "DATA_MESSAGE" || len(d.LogEvents) == 0 {
		return "", s
	}
	for _, e := range d.LogEvents {
		if u, err := metrics.ParseUsage([]byte(e.Message)); err == nil {
			s.Add(time.UnixMilli(e.Timestamp), u)
		}
	}
	h := sha256.Sum256([]byte(d.LogGroup + "\n" + d.LogStream + "\n" + d.LogEvents[0].ID + "\n" + d.LogEvents[len(d.LogEvents)-1].ID))
	return hex.EncodeToString(h[:16]), s
}

// Handle adds one delivery's usage lines to their days. A delivery that cannot be decoded is
// logged and dropped (it never will be); a write that failed after Write's own retries is
// returned, so that Lambda invokes the function with the delivery again (CloudWatch Logs
// invokes it asynchronously: twice more, then the delivery goes to the function's on-failure
// destination, a queue with an alarm, from which it can be sent again), and the batch's markers
// keep what was written from counting twice.
//
// A data message from a log group that is not one of w.Sources is logged and dropped: another
// log group subscribed to the worker counts nothing.
func (w *Worker) Handle(ctx context.Context, ev lambdaevents.CloudwatchLogsEvent) error {
	d, err := ev.AWSLogs.Parse()
	if err != nil {
		w.Log.Error("usage delivery dropped: it cannot be decoded", "err", err.Error())
		return nil
	}
	if d.MessageType == "DATA_MESSAGE" && w.Sources != nil && !w.Sources.Admit(d.Owner, d.LogGroup) {
		w.Log.Warn("usage delivery dropped: not from a log group of this stack", "owner", d.Owner, "log_group", d.LogGroup,
			"filters", strings.Join(d.SubscriptionFilters, ","))
		return nil
	}
	batch, s := decode(d)
	if len(s) == 0 {
		return nil
	}
	if err := Write(ctx, w.DB, batch, s); err != nil {
		w.Log.Warn("usage batch not written: returned for Lambda to invoke again", "batch", batch, "err", err.Error())
		return err
	}
	return nil
}

// FromConfig builds the worker configured by c, with no network I/O.
func FromConfig(ctx context.Context, c config.UsageWorker, log *slog.Logger) (*Worker, error) {
	db, err := store.Open(ctx, c.StoreOptions())
	if err != nil {
		return nil, err
	}
	w := &Worker{DB: db, Log: log}
	if c.AccountID == "" || c.StackName == "" {
		// Outside a deployment (sam local, the runtime emulator): no stack to hold deliveries to.
		// The template always sets both (infra/samtemplate checks it).
		log.Warn("usage worker adds lines of every log group: DEPLOYMENT_ACCOUNT_ID or STACK_NAME is unset")
		return w, nil
	}
	w.Sources = &Sources{Owner: c.AccountID, Stack: c.StackName}
	return w, nil
}

// Main is the usage worker Lambda's whole main.
func Main() {
	w := config.Start(config.LoadUsageWorker, FromConfig)
	lambda.Start(w.Handle)
}
