package certs

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/mholt/acmez/v3/acme"

	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/families/tlscerts"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/platform/stream"
)

// Error codes of a failed job, as provisioning_job.error_code shows them.
const (
	InternalError = "INTERNAL_ERROR"
	DNSError      = "DNS_ERROR"
)

// schedulerGrace is how long after an INTERNAL_ERROR's retries_at the scheduler requests the
// job again if its message has not run it.
const schedulerGrace = 15 * time.Minute

// ErrCrashed is what Handle returns when Fault stopped a job (a simulated kill).
var ErrCrashed = errors.New("certs: worker stopped by an injected fault")

// Worker runs certificate jobs from the certificate jobs queue.
//   - Setting or changing a policy (the API) records the job on its resource (cert_pending: a
//     fresh job id, the names, the key type) and writes the job's item (J#…, payload the job) in
//     the same transaction; the table's stream carries the item's insert to the certificate jobs
//     queue (CertJobsPipe in AWS, the local stream reader otherwise), as committed events leave.
//   - The worker runs a job only while it is its resource's pending job (every write it makes is
//     conditional on cert_pending.job_id and bumps the item's version), so a superseded,
//     redelivered or duplicated message does nothing. It writes provisioning_job (started_at,
//     msg) while it runs; success is store, failure fail.
//   - Deleting an agent ingress writes a job of kind delete_zone (domains.JobDeleteZone) in the
//     deletion's transaction; the worker deletes the zone's records other than its SOA and NS,
//     then the zone (no zone is success), retried by redelivery until it succeeds. A job still
//     running when its ingress is deleted may create the zone after that cleanup looked: when its
//     last write finds the ingress gone, it deletes the zone itself.
//   - The due entries (D#due, sort key <time>#<account>#<resource>) hold each resource's next
//     time: its renewal, its failed job's retry, or, for a job just requested, domains.JobGrace
//     later, the net for a job message lost on its way. The scheduler queries the entries up to
//     now (reading only those) and, per entry, sets a fresh pending job on the condition that
//     the resource's cert_due is still that entry, deleting the entry and writing the job's item
//     in the same transaction; a concurrent or repeated run finds the condition false and
//     requests nothing.
//
// Environment: CERT_JOBS_QUEUE_URL; the domains configuration (BASE_DOMAIN, DNS_ZONE,
// NAME_SERVERS, REGIONS: an agent ingress's event shows its ns_targets and region_domains);
// ACME_DIRECTORY (default Let's Encrypt) and ACME_CA_FILE (extra roots for the directory's TLS,
// pebble's locally); HOSTED_ZONE_ID and DELEGATION_SET_ID (Route 53) or CHALLTESTSRV_URL
// (pebble-challtestsrv's management API) for the challenge records; DNS_RESOLVER (host:port of
// the DNS server CNAMEs are checked through; default the system's); CERT_RENEW_BEFORE (default
// 720h), CERT_RETRY_BACKOFF (1m), CERT_RETRY_MAX_BACKOFF (6h), CERT_DNS_RETRY (24h), all Go
// durations.
type Worker struct {
	DB       *store.DB
	SQS      queue.API
	QueueURL string
	Seal     seal.Sealer
	Issuer   *Issuer
	DNS      DNS
	Resolver Resolver
	Log      *slog.Logger
	// RenewBefore is how long before its expiry a certificate is renewed (renews_at).
	RenewBefore time.Duration
	// Backoff is the delay before the first retry of a temporary failure; each further receive
	// of the job doubles it, up to MaxBackoff.
	Backoff, MaxBackoff time.Duration
	// DNSRetry is when a job that failed on DNS is tried again without a PATCH of its policy.
	DNSRetry time.Duration
	// Domains is the configuration the resources it changes are rendered with.
	Domains *domains.Config
	// Fault, when set, is asked once a job's certificate has been issued, before it is stored;
	// true stops the batch as if the worker were killed (fault injection in tests).
	Fault func(job domains.CertJobMessage) bool
	// Metrics receives a metrics.CertificateJob line per run that reaches an outcome; nil is
	// standard output.
	Metrics *metrics.Emitter
}

func (w *Worker) log() *slog.Logger {
	if w.Log != nil {
		return w.Log
	}
	return slog.Default()
}

// Handle is the Lambda handler of the SQS trigger (ReportBatchItemFailures). The jobs of a batch
// run concurrently. A job retried after a temporary failure is reported as failed with its
// message hidden until retries_at; every other message is done (issued, stale, or failed on DNS,
// which waits for a PATCH or the scheduler's daily retry).
func (w *Worker) Handle(ctx context.Context, ev lambdaevents.SQSEvent) (lambdaevents.SQSEventResponse, error) {
	var (
		mu      sync.Mutex
		res     lambdaevents.SQSEventResponse
		crashed bool
		wg      sync.WaitGroup
	)
	for _, m := range ev.Records {
		wg.Go(func() {
			retry, err := w.handleOne(ctx, m)
			mu.Lock()
			defer mu.Unlock()
			if errors.Is(err, ErrCrashed) {
				crashed = true
			}
			if err != nil || retry {
				res.BatchItemFailures = append(res.BatchItemFailures, lambdaevents.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			}
		})
	}
	wg.Wait()
	if crashed {
		return res, ErrCrashed
	}
	return res, nil
}

func (w *Worker) handleOne(ctx context.Context, m lambdaevents.SQSMessage) (retry bool, err error) {
	var job domains.CertJobMessage
	if err := json.Unmarshal([]byte(m.Body), &job); err != nil || job.JobID == "" || job.AccountID == "" || job.ResourceID == "" ||
		job.Kind != "" && (job.Kind != domains.JobDeleteZone || job.Domain == "") {
		w.log().Error("dropping a message that is not a certificate job", "message_id", m.MessageId)
		return false, nil
	}
	if job.Kind == domains.JobDeleteZone {
		// Retried by redelivery until it succeeds (then the dead-letter queue).
		if err := w.DNS.DeleteIngressZone(ctx, job.ResourceID, job.Domain); err != nil {
			w.log().Error("deleting a deleted agent ingress's DNS zone failed", "job_id", job.JobID, "resource_id", job.ResourceID, "err", err.Error())
			return true, err
		}
		return false, nil
	}
	receives, _ := strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
	wait, err := w.Run(ctx, job, max(receives, 1))
	if err != nil {
		if !errors.Is(err, ErrCrashed) {
			w.log().Error("certificate job failed", "job_id", job.JobID, "resource_id", job.ResourceID, "err", err.Error())
		}
		return true, err
	}
	if wait <= 0 {
		return false, nil
	}
	// Back on the queue at retries_at (SQS allows at most 12 hours).
	secs := int32(min(wait, 12*time.Hour).Round(time.Second) / time.Second)
	if _, err := w.SQS.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(w.QueueURL),
		ReceiptHandle: aws.String(m.ReceiptHandle), VisibilityTimeout: max(secs, 1)}); err != nil {
		w.log().Warn("could not delay the retry; it comes back after the queue's visibility timeout", "job_id", job.JobID, "err", err.Error())
	}
	return true, nil
}

// Run runs one job: it is done (wait 0, nil) when the certificate is stored, when the job
// failed on DNS, or when it is no longer its resource's pending job; it returns how long to wait
// before receiving it again after a temporary failure; an error means it must be received again
// as it is. attempt is how many times the job's message has been received.
func (w *Worker) Run(ctx context.Context, job domains.CertJobMessage, attempt int) (wait time.Duration, err error) {
	tally := &metrics.Tally{}
	ctx = metrics.WithTally(ctx, tally)
	t, err := w.load(ctx, job)
	if err != nil || t == nil {
		return 0, err
	}
	now := time.Now()
	started := now.Unix()
	if j := t.Cert.Job; j != nil && j.JobID == job.JobID {
		// A message back a moment before retries_at (visibility is whole seconds) runs now.
		if j.RetriesAt > now.Unix()+1 {
			if j.ErrorCode == DNSError {
				return 0, nil // the scheduler or a PATCH of the policy runs it again
			}
			return time.Until(time.Unix(j.RetriesAt, 0)), nil
		}
		if j.StartedAt != 0 {
			started = j.StartedAt
		}
	}
	names := t.Cert.Pending.Domains
	running := domains.CertJob{JobID: job.JobID, StartedAt: started, Msg: "obtaining a certificate for " + strings.Join(names, ", ")}
	if stale, err := w.setJob(ctx, t, job, &running, ""); err != nil || stale {
		return 0, err
	}
	key, err := NewKey(t.Cert.Pending.PrivateKeyType)
	if err != nil {
		return 0, err
	}
	chain, err := w.obtain(ctx, t, key)
	obtained, stale := err == nil, false
	if err != nil {
		wait, stale, err = w.fail(ctx, t, job, started, attempt, err)
	} else if w.Fault != nil && w.Fault(job) {
		return 0, ErrCrashed
	} else {
		stale, err = w.store(ctx, job, chain, key)
	}
	if err == nil {
		outcome := metrics.Issued
		if stale {
			outcome = metrics.Stale
		} else if !obtained {
			outcome = metrics.Failed
		}
		w.Metrics.Emit(metrics.CertificateJob, map[string]string{metrics.DimOutcome: outcome}, 1)
		w.usage(job.AccountID, outcome == metrics.Issued, tally)
	}
	if stale && err == nil && ingress(t) {
		err = w.dropOrphanZone(ctx, t)
	}
	return wait, err
}

// usage writes the usage line of a job's run for account: the certificate it issued, if it did,
// the resources it stored less those it dropped and the DynamoDB capacity it consumed (tally).
// A job is no request: it counts as no mutation.
func (w *Worker) usage(account string, issued bool, tally *metrics.Tally) {
	u := metrics.Usage{Account: account}
	tally.Fill(&u)
	u.Mutation = 0
	if issued {
		u.Certificates = 1
	}
	w.Metrics.EmitUsage(u)
}

// ingress reports the target an agent ingress: its domain is delegated to the service and has
// a DNS zone of its own.
func ingress(t *domains.Managed) bool { return ids.Is(t.Item.Base().ID, ids.AgentIngress) }

// dropOrphanZone deletes the DNS zone of an agent ingress deleted while its job ran: the job
// may have created the zone after the deletion's cleanup job found none.
func (w *Worker) dropOrphanZone(ctx context.Context, t *domains.Managed) error {
	var it store.Meta
	meta := t.Item.Base()
	err := w.DB.Get(ctx, meta.Key, &it)
	if !store.IsNotFound(err) {
		return err
	}
	return w.DNS.DeleteIngressZone(ctx, meta.ID, t.Domain)
}

// load reads the job's resource; nil when the job is no longer its pending one (the resource
// was deleted, its policy removed or changed, or the job already done).
func (w *Worker) load(ctx context.Context, job domains.CertJobMessage) (*domains.Managed, error) {
	t, err := domains.LoadManaged(ctx, w.DB, w.Domains, job.AccountID, job.ResourceID)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", job.ResourceID, err)
	}
	if t == nil || t.Cert.Pending == nil || t.Cert.Pending.JobID != job.JobID || t.Cert.Policy == nil {
		return nil, nil
	}
	return t, nil
}

// whilePending is the condition of every write of a job: it is still its resource's pending job.
func whilePending(jobID string) expression.ConditionBuilder {
	return expression.Name("cert_pending.job_id").Equal(expression.Value(jobID))
}

// setJob records the job's state, and when dueSK is set its due entry there; stale reports that
// the job is no longer pending. Every write of the worker bumps the item's version, so an API
// update read before it retries instead of overwriting it.
func (w *Worker) setJob(ctx context.Context, t *domains.Managed, job domains.CertJobMessage, state *domains.CertJob, dueSK string) (stale bool, err error) {
	upd := expression.Set(expression.Name("provisioning_job"), expression.Value(state)).
		Add(expression.Name(store.AttrVersion), expression.Value(1))
	tx := &store.Tx{}
	meta := t.Item.Base()
	if dueSK != "" {
		upd = upd.Set(expression.Name("cert_due"), expression.Value(dueSK))
		t.Cert.MoveDue(tx, meta.AccountID, meta.ID, dueSK)
	}
	tx.Update("cert.target", meta.Key, upd, whilePending(job.JobID))
	return w.commit(ctx, tx)
}

func (w *Worker) commit(ctx context.Context, tx *store.Tx) (stale bool, err error) {
	err = w.DB.Commit(ctx, tx)
	if store.ConditionFailed(err, "cert.target") {
		return true, nil
	}
	return false, err
}

// dnsProblem is a failure the domain's owner must fix in DNS (DNS_ERROR).
type dnsProblem struct{ msg string }

func (e *dnsProblem) Error() string { return e.msg }

// obtain checks a custom domain's _acme-challenge CNAME, then orders the certificate. An agent
// ingress's challenge records go in its domain's zone (created by its first job), a custom
// domain's in the service's zone at its acme_challenge_cname_target.
func (w *Worker) obtain(ctx context.Context, t *domains.Managed, key crypto.Signer) (string, error) {
	records := map[string]string{}
	solver := challengeSolver{delegated: w.DNS.ServiceZone(), service: w.DNS.ServiceZone(), records: records}
	if ingress(t) {
		zone, err := w.DNS.IngressZone(ctx, t.Item.Base().ID, t.Domain)
		if err != nil {
			return "", err
		}
		solver.delegated = zone
	}
	if t.ACMETarget != "" {
		for _, name := range t.Cert.Pending.Domains {
			base := strings.TrimPrefix(name, "*.")
			if err := w.checkCNAME(ctx, "_acme-challenge."+base, t.ACMETarget); err != nil {
				return "", err
			}
			records[base] = t.ACMETarget
		}
	}
	return w.Issuer.Obtain(ctx, t.Cert.Pending.Domains, key, solver)
}

// checkCNAME requires record to be a CNAME to want.
func (w *Worker) checkCNAME(ctx context.Context, record, want string) error {
	got, err := w.Resolver.LookupCNAME(ctx, record)
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		got, err = record, nil
	}
	if err != nil {
		return fmt.Errorf("looking up %s: %w", record, err)
	}
	got = strings.TrimSuffix(strings.ToLower(got), ".")
	switch got {
	case want:
		return nil
	case record:
		return &dnsProblem{fmt.Sprintf("no CNAME record at %s: create a CNAME record %s pointing to %s", record, record, want)}
	default:
		return &dnsProblem{fmt.Sprintf("%s is a CNAME to %s: change the CNAME record %s to point to %s", record, got, record, want)}
	}
}

// classify tells a failure the owner must fix in DNS (DNS_ERROR, with what to fix) from a
// temporary one (INTERNAL_ERROR): the authority or the DNS provider unreachable, throttled or
// rate limiting.
func classify(err error, names []string) (code, msg string) {
	var dp *dnsProblem
	if errors.As(err, &dp) {
		return DNSError, dp.msg
	}
	var p acme.Problem
	if errors.As(err, &p) {
		switch p.Type {
		case acme.ProblemTypeDNS, acme.ProblemTypeCAA, acme.ProblemTypeUnauthorized, acme.ProblemTypeIncorrectResponse,
			acme.ProblemTypeRejectedIdentifier:
			return DNSError, fmt.Sprintf("the certificate authority could not validate %s: %s", strings.Join(names, ", "), p.Detail)
		}
	}
	return InternalError, "the certificate authority or the DNS provider is unavailable; retrying at retries_at"
}

// fail records a failed job: DNS_ERROR retried after DNSRetry (or a PATCH of the policy),
// INTERNAL_ERROR after a backoff that doubles with every attempt. The due entry moves to
// retries_at, so the scheduler retries the job even if its message is lost.
//
// A temporary failure (authority or DNS provider unreachable, throttled, rate limited) is
// INTERNAL_ERROR: retries_at is a backoff that doubles with each receive (CERT_RETRY_BACKOFF, up
// to CERT_RETRY_MAX_BACKOFF), the message hidden until then, so it is retried without any user
// action; its due entry is schedulerGrace after retries_at, so the scheduler requests it again
// only if the message was lost (dead-lettered after the queue's receive limit). A failure the
// owner must fix (missing or wrong CNAME, NXDOMAIN, wrong TXT, CAA refusal) is DNS_ERROR, msg
// naming the record: retried when the policy is PATCHed (a new job) and otherwise by the
// scheduler after CERT_DNS_RETRY.
func (w *Worker) fail(ctx context.Context, t *domains.Managed, job domains.CertJobMessage, started int64, attempt int, cause error) (wait time.Duration, stale bool, err error) {
	code, msg := classify(cause, t.Cert.Pending.Domains)
	meta := t.Item.Base()
	wait = w.DNSRetry
	if code == InternalError {
		wait = w.Backoff << min(attempt-1, 20)
		wait = min(wait, w.MaxBackoff)
	}
	w.log().Warn("certificate job failed", "job_id", job.JobID, "resource_id", meta.ID, "error_code", code, "err", cause.Error())
	retriesAt := time.Now().Add(wait)
	at := retriesAt.Unix()
	if retriesAt.Sub(time.Unix(at, 0)) > 0 {
		at++ // whole seconds, never before the wait is over
	}
	state := &domains.CertJob{JobID: job.JobID, ErrorCode: code, Msg: msg, StartedAt: started, RetriesAt: at}
	due := at
	if code == InternalError {
		// The message itself comes back at retries_at; the scheduler is only the net for a
		// message lost (dead-lettered), so it looks later, never racing a retry in flight.
		due += int64(schedulerGrace / time.Second)
	}
	if stale, err := w.setJob(ctx, t, job, state, store.CertDueKey(due, meta.AccountID, meta.ID).SK); err != nil || stale {
		return 0, stale, err
	}
	if code == DNSError {
		return 0, false, nil
	}
	return time.Until(time.Unix(at, 0)), false, nil
}

// storeAttempts bounds how often store reads the resource again after it changed under it (an
// API update between the read and the commit); out of them, the job's message is received again.
const storeAttempts = 8

// store keeps the issued chain as a TLS certificate of the account (its key sealed, issued_at
// set) held by the job's resource, in one transaction that also points the resource at it,
// deletes the certificate it replaces, clears the job, schedules the renewal and records the
// events an HTTP mutation would: the new certificate's created event, the replaced one's
// deleted event and the resource's updated event, for the caller who set the policy. The
// certificate starts with one reference, its holder's, so DELETE /tls_certificates refuses it
// as it refuses an uploaded certificate a domain uses. A job no longer pending stores nothing
// (stale).
//
// The new certificate is a TLS certificate of the account with issued_at set and its private
// key sealed; renews_at is the leaf's expiry minus CERT_RENEW_BEFORE; cert_pending and
// provisioning_job are cleared and the renewal's due entry written, each event's object as GET
// returns it. The transaction holds only at the resource's version read (and the replaced
// certificate's), so the events show exactly what was stored; a resource changed meanwhile is
// read again (the job still pending) and the store retried (storeIn).
func (w *Worker) store(ctx context.Context, job domains.CertJobMessage, chainPEM string, key crypto.Signer) (stale bool, err error) {
	chain, err := tlscerts.ParseChain(chainPEM)
	if err != nil {
		return false, fmt.Errorf("the issued chain: %w", err)
	}
	leaf := chain[0]
	now := time.Now()
	id := ids.NewAt(ids.TLSCertificate, now)
	sealed, err := seal.SealPrivateKey(ctx, w.Seal, key, job.AccountID, id)
	if err != nil {
		return false, err
	}
	keyType := domains.KeyTypeRSA
	if _, ok := key.(*ecdsa.PrivateKey); ok {
		keyType = domains.KeyTypeECDSA
	}
	cert := tlscerts.TLSCertificateItem{
		Meta:           store.Meta{Key: store.ResourceKey(job.AccountID, id), ID: id, AccountID: job.AccountID, CreatedAt: now.Unix(), Version: 1, Refs: 1},
		Described:      resource.Described{Description: "managed certificate of " + job.ResourceID},
		CertificatePEM: chainPEM, Details: tlscerts.Derive(leaf), PrivateKeyType: keyType, PrivateKey: sealed, IssuedAt: now.Unix(),
	}
	renewsAt := leaf.NotAfter.Add(-w.RenewBefore).Unix()
	for range storeAttempts {
		t, err := w.load(ctx, job)
		if err != nil {
			return false, err
		}
		if t == nil {
			w.log().Info("certificate job superseded; its certificate is discarded", "job_id", job.JobID, "resource_id", job.ResourceID)
			return true, nil
		}
		if done, err := w.storeIn(ctx, t, job, &cert, renewsAt); err != nil || done {
			return false, err
		}
	}
	return false, fmt.Errorf("storing the certificate of %s: the resource kept changing", job.ResourceID)
}

// storeIn is one attempt of store on the resource t as read; done is false when t or the
// certificate it replaces changed since they were read (read again and retry).
func (w *Worker) storeIn(ctx context.Context, t *domains.Managed, job domains.CertJobMessage, cert *tlscerts.TLSCertificateItem, renewsAt int64) (done bool, err error) {
	meta := t.Item.Base()
	r := t.Request()
	tx := &store.Tx{}
	tx.Put("cert.new", cert, store.Absent())
	if _, err := audit.Record(tx, r, audit.Type(tlscerts.TLSCertificateEventKind, "created"), tlscerts.Render(r, cert)); err != nil {
		return false, err
	}
	if _, err := t.Cert.DropCertificate(ctx, w.DB, tx, r, meta.AccountID); err != nil {
		return false, err
	}
	due := store.CertDueKey(renewsAt, meta.AccountID, meta.ID).SK
	t.Cert.MoveDue(tx, meta.AccountID, meta.ID, due)
	// The resource as the updated event shows it: the commit holds only at the version read.
	tx.Update("cert.target", meta.Key, expression.Set(expression.Name("managed_certificate_id"), expression.Value(cert.ID)).
		Set(expression.Name("renews_at"), expression.Value(renewsAt)).
		Set(expression.Name("cert_due"), expression.Value(due)).
		Remove(expression.Name("cert_pending")).Remove(expression.Name("provisioning_job")).
		Add(expression.Name(store.AttrVersion), expression.Value(1)), whilePending(job.JobID), store.AtVersion(meta.Version))
	t.Cert.ManagedCertificateID, t.Cert.RenewsAt, t.Cert.Pending, t.Cert.Job = cert.ID, renewsAt, nil, nil
	meta.Version++
	if err := t.RecordUpdated(tx, r); err != nil {
		return false, err
	}
	err = w.DB.Commit(ctx, tx)
	if store.ConditionFailed(err, "cert.target") || store.ConditionFailed(err, domains.LabelDropCert) || store.IsConflict(err) {
		return false, nil
	}
	return err == nil, err
}

// JobsConsumer is the stream consumer carrying certificate jobs to their queue, its QueueURL
// left to the caller. It lives with the worker, not with the domains family, so the HTTP
// functions that write jobs never link the SQS client.
var JobsConsumer = stream.Consumer{Name: "cert_jobs", Pattern: domains.CertJobsPattern, InputTemplate: domains.CertJobsInputTemplate}
