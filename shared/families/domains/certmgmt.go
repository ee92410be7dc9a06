package domains

import (
	"context"
	"encoding/json"
	"time"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// Authorities and key types of managed certificates.
const (
	AuthorityLetsEncrypt = "letsencrypt"
	KeyTypeRSA           = "rsa"
	KeyTypeECDSA         = "ecdsa"
)

// Reasons a certificate job is requested.
const (
	ReasonPolicy  = "policy"  // a policy was set or changed
	ReasonRenewal = "renewal" // the certificate is due for renewal
	ReasonRetry   = "retry"   // a failed job's retry is due
)

// CertManagement is the certificate automation state of a reserved domain or an agent ingress,
// stored on its item. The API sets Policy and, whenever a policy is set or changed, records
// Pending (the job the certificate worker is to run) and writes the job's item in the same
// transaction (EnqueueCertJob); the worker runs it and writes Job while it runs or retries, then
// ManagedCertificateID and RenewsAt, clearing Pending and Job. The scheduler requests the next
// job (a renewal or a retry) when the item's due entry (DueSK) comes due.
//
// Setting or changing a policy records Pending (names, authority, key type, reason, time) in the
// same write; certificate_management_status shows renews_at and provisioning_job, both null until
// the worker has run. Deleting the domain (or ingress) deletes the certificate the worker issued
// for it.
type CertManagement struct {
	Policy *CertPolicy `dynamodbav:"cert_policy,omitempty"`
	// Names are the DNS names the certificate is for (the domain, or every region domain).
	Names []string `dynamodbav:"cert_names,omitempty"`
	// DueSK is the sort key of the item's entry in store.CertDuePartition, when it has one.
	DueSK string `dynamodbav:"cert_due,omitempty"`
	// ManagedCertificateID is the TLS certificate the worker issued last.
	ManagedCertificateID string `dynamodbav:"managed_certificate_id,omitempty"`
	// RenewsAt is when the managed certificate is due for renewal (Unix seconds; 0 none yet).
	RenewsAt int64      `dynamodbav:"renews_at,omitempty"`
	Job      *CertJob   `dynamodbav:"provisioning_job,omitempty"`
	Pending  *CertOrder `dynamodbav:"cert_pending,omitempty"`
	// Requester is who set the policy: the certificate worker records the events of the
	// certificates it stores and replaces on their behalf (audit.OnBehalf).
	Requester *audit.OnBehalf `dynamodbav:"cert_requester,omitempty"`
}

// CertPolicy is a stored certificate management policy.
type CertPolicy struct {
	Authority      string `dynamodbav:"authority"`
	PrivateKeyType string `dynamodbav:"private_key_type"`
}

// CertJob is the state of a running or retrying provisioning job, as the API reports it.
type CertJob struct {
	// JobID is the job this state is of (Pending.JobID while it runs or retries).
	JobID     string `dynamodbav:"job_id,omitempty"`
	ErrorCode string `dynamodbav:"error_code,omitempty"` // INTERNAL_ERROR or DNS_ERROR
	Msg       string `dynamodbav:"msg,omitempty"`
	StartedAt int64  `dynamodbav:"started_at,omitempty"`
	RetriesAt int64  `dynamodbav:"retries_at,omitempty"`
}

// CertOrder is a requested job not yet taken by the worker: the names to certify and why.
type CertOrder struct {
	JobID          string   `dynamodbav:"job_id"`
	Domains        []string `dynamodbav:"domains"`
	Authority      string   `dynamodbav:"authority"`
	PrivateKeyType string   `dynamodbav:"private_key_type"`
	Reason         string   `dynamodbav:"reason"`
	RequestedAt    int64    `dynamodbav:"requested_at"`
}

// CertPolicyJSON is the wire form of a certificate management policy.
type CertPolicyJSON struct {
	Authority      string `json:"authority"`
	PrivateKeyType string `json:"private_key_type"`
}

// CertStatusJSON is the wire form of certificate_management_status.
type CertStatusJSON struct {
	RenewsAt        *string      `json:"renews_at"`
	ProvisioningJob *CertJobJSON `json:"provisioning_job"`
}

// CertJobJSON is the wire form of a provisioning job.
type CertJobJSON struct {
	ErrorCode *string `json:"error_code"`
	Msg       string  `json:"msg"`
	StartedAt string  `json:"started_at"`
	RetriesAt *string `json:"retries_at"`
}

// check validates a supplied policy (field names it in errors) and fills the defaults: authority
// letsencrypt, the private key type defKeyType.
func (p CertPolicyJSON) check(field, defKeyType string) (CertPolicy, error) {
	out := CertPolicy(p)
	if out.Authority == "" {
		out.Authority = AuthorityLetsEncrypt
	}
	if out.PrivateKeyType == "" {
		out.PrivateKeyType = defKeyType
	}
	if out.Authority != AuthorityLetsEncrypt {
		return out, api.BadRequest(CodeBadAuthority, field+".authority", "authority %s is not supported; the only authority is letsencrypt", api.Describe(p.Authority))
	}
	if out.PrivateKeyType != KeyTypeRSA && out.PrivateKeyType != KeyTypeECDSA {
		return out, api.Invalid(field+".private_key_type", "private_key_type %s is not rsa or ecdsa", api.Describe(p.PrivateKeyType))
	}
	return out, nil
}

// setPolicy stores a checked policy set by r's caller and requests a job for domains, reporting
// whether it did; the caller then writes the job's item (enqueue) in the same transaction. The
// policy the item already has, whose last job did not fail, changes nothing: infrastructure-as-code
// tools send back the policy they read with every update, which must not request a certificate
// issued or on its way again, while setting it again after a failed job retries at once.
func (c *CertManagement) setPolicy(r *api.Request, p CertPolicy, reason string, domains []string, now time.Time) bool {
	if c.Policy != nil && *c.Policy == p && (c.Job == nil || c.Job.ErrorCode == "") {
		return false
	}
	c.Policy, c.Names, c.Requester = &p, domains, audit.OnBehalfOf(r)
	c.Request(reason, now)
	return true
}

// Request records a new job (a fresh id) for the policy and names the item has, replacing any
// pending one, and returns it. The caller writes its item with EnqueueCertJob in the
// transaction that stores the order.
func (c *CertManagement) Request(reason string, now time.Time) *CertOrder {
	c.Pending = &CertOrder{JobID: ids.NewAt(ids.CertJob, now), Domains: c.Names, Authority: c.Policy.Authority,
		PrivateKeyType: c.Policy.PrivateKeyType, Reason: reason, RequestedAt: now.Unix()}
	return c.Pending
}

// JobGrace is how long after a job is requested the scheduler requests it again if no worker
// has taken it (its message lost): the due entry enqueue writes.
const JobGrace = 15 * time.Minute

// enqueue writes the item of the pending job of the resource id in account to tx, and moves
// the resource's due entry to JobGrace from now.
func (c *CertManagement) enqueue(tx *store.Tx, account, id string, now time.Time) {
	if c.Pending == nil {
		return
	}
	EnqueueCertJob(tx, CertJobMessage{JobID: c.Pending.JobID, AccountID: account, ResourceID: id}, now)
	c.MoveDue(tx, account, id, store.CertDueKey(now.Add(JobGrace).Unix(), account, id).SK)
}

// CertDueItem is a resource's entry in store.CertDuePartition: when its next job is to be
// requested (a renewal, a retry, or a job no worker took).
type CertDueItem struct {
	store.Key
	AccountID  string `dynamodbav:"account"`
	ResourceID string `dynamodbav:"resource_id"`
}

// MoveDue replaces, in tx, the due entry of the resource id of account with one at dueSK, and
// records it (DueSK); the caller writes DueSK on the resource in the same transaction.
func (c *CertManagement) MoveDue(tx *store.Tx, account, id, dueSK string) {
	if c.DueSK != "" && c.DueSK != dueSK {
		tx.Delete("cert.due.old", store.Key{PK: store.CertDuePartition, SK: c.DueSK})
	}
	tx.Put("cert.due", CertDueItem{Key: store.Key{PK: store.CertDuePartition, SK: dueSK}, AccountID: account, ResourceID: id})
	c.DueSK = dueSK
}

// stop ends automatic management, the item's write in tx: no policy, no pending or running job,
// no status, and the scheduler's due entry goes in the same transaction. A job already queued
// finds itself no longer pending and does nothing; one running discards its certificate (every
// write of the worker is conditioned on its job being pending). The certificate already issued
// stays where it is, still held by the resource (a reserved domain keeps it attached until
// DELETE …/certificate, an uploaded certificate attached in its place, a new policy's
// certificate replacing it, or the resource's deletion, each of which deletes it).
func (c *CertManagement) stop(tx *store.Tx) {
	if c.DueSK != "" {
		tx.Delete("cert.due.stop", store.Key{PK: store.CertDuePartition, SK: c.DueSK})
	}
	c.Policy, c.Pending, c.Job, c.RenewsAt, c.Names, c.DueSK, c.Requester = nil, nil, nil, 0, nil, "", nil
}

// release deletes, in m (the deletion of the resource of account by r), what automation made
// for it: its managed certificate (with the certificate's deleted event) and its due entry.
func (c *CertManagement) release(ctx context.Context, kit *resource.Kit, r *api.Request, m *resource.Mutation, account string) error {
	if _, err := c.dropCertificate(ctx, kit, r, m, account); err != nil {
		return err
	}
	if c.DueSK != "" {
		m.Delete("cert.due", store.Key{PK: store.CertDuePartition, SK: c.DueSK})
	}
	return nil
}

// CertJobMessage is a certificate job as the certificate worker receives it: the message body
// is this, in JSON. A certificate job (no Kind) runs only while it is the resource's pending
// job; a JobDeleteZone job deletes the DNS zone of a deleted agent ingress.
type CertJobMessage struct {
	JobID      string `json:"job_id"`
	AccountID  string `json:"account_id"`
	ResourceID string `json:"resource_id"`
	Kind       string `json:"kind,omitempty"`
	// Domain is the deleted agent ingress's domain (JobDeleteZone).
	Domain string `json:"domain,omitempty"`
}

// JobDeleteZone is the kind of job that deletes a deleted agent ingress's DNS zone (a Route 53
// hosted zone in AWS) with its records. It leaves with the deletion's transaction, like every
// job, so the zone's deletion waits for the worker rather than the request.
const JobDeleteZone = "delete_zone"

// CertJobItem is a requested job as the table's stream carries it to the certificate jobs
// queue: written once, in the transaction that records the job on its resource, and expiring
// by TTL like the events' outbox items.
type CertJobItem struct {
	store.Key
	JobID      string `dynamodbav:"job_id"`
	AccountID  string `dynamodbav:"account"`
	ResourceID string `dynamodbav:"resource_id"`
	Payload    string `dynamodbav:"payload"`
	Created    int64  `dynamodbav:"created"`
	TTL        int64  `dynamodbav:"ttl"`
}

// EnqueueCertJob adds the item of job to tx: once the transaction commits, the table's stream
// carries it to the certificate jobs queue (the CertJobsPipe in AWS, the local stream reader
// otherwise), exactly as committed events leave.
func EnqueueCertJob(tx *store.Tx, job CertJobMessage, now time.Time) {
	payload, _ := json.Marshal(job) // strings only: cannot fail
	tx.Put("cert.job", CertJobItem{Key: store.CertJobKey(job.AccountID, job.JobID), JobID: job.JobID, AccountID: job.AccountID,
		ResourceID: job.ResourceID, Payload: string(payload), Created: now.Unix(), TTL: now.Add(audit.OutboxRetention).Unix()})
}

// How certificate jobs leave the table: inserts of job items only (a TTL expiry is a REMOVE),
// the item's payload as the message body. template.yaml's CertJobsPipe declares exactly this
// filter and input template; a test holds them equal.
const (
	CertJobsPattern       = `{"eventName":["INSERT"],"dynamodb":{"Keys":{"pk":{"S":[{"prefix":"J#"}]}}}}`
	CertJobsInputTemplate = `<$.dynamodb.NewImage.payload.S>`
)

// render is the wire form of the policy and status (both null without a policy).
func (c *CertManagement) render() (*CertPolicyJSON, *CertStatusJSON) {
	if c.Policy == nil {
		return nil, nil
	}
	st := &CertStatusJSON{}
	if c.RenewsAt != 0 {
		t := api.Timestamp(c.RenewsAt)
		st.RenewsAt = &t
	}
	if j := c.Job; j != nil {
		st.ProvisioningJob = &CertJobJSON{ErrorCode: optional(j.ErrorCode), Msg: j.Msg, StartedAt: api.Timestamp(j.StartedAt)}
		if j.RetriesAt != 0 {
			t := api.Timestamp(j.RetriesAt)
			st.ProvisioningJob.RetriesAt = &t
		}
	}
	return &CertPolicyJSON{Authority: c.Policy.Authority, PrivateKeyType: c.Policy.PrivateKeyType}, st
}
