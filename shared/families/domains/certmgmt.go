package domains

import (
	"time"

	"tunnelapi/shared/platform/api"
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
)

// CertManagement is the certificate automation state of a reserved domain or an agent ingress,
// stored on its item. The API sets Policy and, whenever a policy is set or changed, records
// Pending (the job the certificate worker is to run); the worker runs it and writes Job while it
// runs or retries, then ManagedCertificateID and RenewsAt, clearing Pending and Job.
type CertManagement struct {
	Policy *CertPolicy `dynamodbav:"cert_policy,omitempty"`
	// ManagedCertificateID is the TLS certificate the worker issued last.
	ManagedCertificateID string `dynamodbav:"managed_certificate_id,omitempty"`
	// RenewsAt is when the managed certificate is due for renewal (Unix seconds; 0 none yet).
	RenewsAt int64      `dynamodbav:"renews_at,omitempty"`
	Job      *CertJob   `dynamodbav:"provisioning_job,omitempty"`
	Pending  *CertOrder `dynamodbav:"cert_pending,omitempty"`
}

// CertPolicy is a stored certificate management policy.
type CertPolicy struct {
	Authority      string `dynamodbav:"authority"`
	PrivateKeyType string `dynamodbav:"private_key_type"`
}

// CertJob is the state of a running or retrying provisioning job, as the API reports it.
type CertJob struct {
	ErrorCode string `dynamodbav:"error_code,omitempty"` // INTERNAL_ERROR or DNS_ERROR
	Msg       string `dynamodbav:"msg,omitempty"`
	StartedAt int64  `dynamodbav:"started_at,omitempty"`
	RetriesAt int64  `dynamodbav:"retries_at,omitempty"`
}

// CertOrder is a requested job not yet taken by the worker: the names to certify and why.
type CertOrder struct {
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
	out := CertPolicy{Authority: p.Authority, PrivateKeyType: p.PrivateKeyType}
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

// setPolicy stores a checked policy and requests a job for domains.
func (c *CertManagement) setPolicy(p CertPolicy, reason string, domains []string, now time.Time) {
	c.Policy = &p
	c.Pending = &CertOrder{Domains: domains, Authority: p.Authority, PrivateKeyType: p.PrivateKeyType, Reason: reason, RequestedAt: now.Unix()}
}

// stop ends automatic management: no policy, no job, no status.
func (c *CertManagement) stop() {
	c.Policy, c.Pending, c.Job, c.RenewsAt = nil, nil, nil, 0
}

// render is the wire form of the policy and status (both null without a policy).
func (c CertManagement) render() (*CertPolicyJSON, *CertStatusJSON) {
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
