// Package certs is the certificate automation: the certificate worker (functions/cert_worker,
// triggered by the certificate jobs queue) obtains managed certificates for reserved domains
// and agent ingresses over ACME, and the scheduler (functions/scheduler, on an EventBridge
// schedule) requests their renewals and the retries of failed jobs.
//
// ACME library: github.com/mholt/acmez (v3), rather than go-acme/lego. Both are well kept and
// both run against pebble in their own tests; acmez is the ACME core of Caddy's CertMagic, a
// library rather than a tool: it needs only golang.org/x/crypto and x/net (lego pulls in its
// DNS providers' framework and a DNS library), so the worker's zip and cold start stay close to
// the others', and it leaves DNS to the caller through one small interface (Solver: Present,
// CleanUp), which is where this package's rules live — which record to write, when the user's
// CNAME is missing — and it reports the authority's errors as typed RFC 8555 problems, from
// which a failure is told DNS_ERROR or INTERNAL_ERROR.
//
// How a job flows:
//   - Setting or changing a policy (the API) records the job on its resource (cert_pending: a
//     fresh job id, the names, the key type) and writes the job's item (J#…, payload the job) in
//     the same transaction; the table's stream carries the item's insert to the certificate jobs
//     queue (CertJobsPipe in AWS, the local stream reader otherwise), as committed events leave.
//   - The worker runs a job only while it is its resource's pending job (every write it makes is
//     conditional on cert_pending.job_id and bumps the item's version), so a superseded,
//     redelivered or duplicated message does nothing. It writes provisioning_job (started_at,
//     msg) while it runs.
//   - Agent ingress domains are delegated to the service: the challenge record is written at
//     _acme-challenge.<region domain> in the ingress domain's own zone (DNS.IngressZone). A
//     custom reserved domain is validated through the user's CNAME from _acme-challenge.<domain>
//     to its acme_challenge_cname_target, which the worker checks first (a missing or wrong
//     CNAME is DNS_ERROR naming the record to create) and then writes the record at the target,
//     in the service's zone (DNS.ServiceZone).
//   - DNS in AWS (Route53): the service's zone is template.yaml's HostedZone (HOSTED_ZONE_ID).
//     An ingress domain's NS records point at the name servers of one reusable delegation set
//     (DELEGATION_SET_ID; NAME_SERVERS, its ns_targets, are that set's), so its first job
//     creates a hosted zone for the domain on that set (CreateHostedZone, CallerReference the
//     ingress id: a concurrent or retried creation fails with HostedZoneAlreadyExists and finds
//     the zone by name and caller reference instead of making a second). Records are written
//     with UPSERT (TXT values quoted, TTL 60), waited for until INSYNC once every challenge of
//     the order is presented (acmez's Waiter), and deleted exactly as listed back. A zone Route 53
//     refuses because another ingress's domain is its parent or child (ConflictingDomainExists;
//     the same name servers cannot serve both) is DNS_ERROR naming the domain; the same name
//     left by a deleted ingress whose zone is not deleted yet, throttling and every other
//     Route 53 error are INTERNAL_ERROR. Locally challtestsrv is every zone at once.
//   - Deleting an agent ingress writes a job of kind delete_zone (domains.JobDeleteZone) in the
//     deletion's transaction; the worker deletes the zone's records other than its SOA and NS,
//     then the zone (no zone is success), retried by redelivery until it succeeds. A job still
//     running when its ingress is deleted may create the zone after that cleanup looked: when its
//     last write finds the ingress gone, it deletes the zone itself.
//   - Success: in one transaction the issued chain becomes a TLS certificate of the account
//     (issued_at set, its private key sealed, one reference: its holder's), the resource points
//     at it (its previous managed certificate deleted), renews_at is set to the leaf's expiry
//     minus CERT_RENEW_BEFORE, cert_pending and provisioning_job are cleared, the renewal's due
//     entry written, and the events an HTTP mutation would record are recorded:
//     tls_certificate_created, tls_certificate_deleted for the replaced certificate, and the
//     resource's domain_updated or agent_ingress_updated, each object as GET returns it, for the
//     caller who set the policy. The transaction holds only at the resource's version read (and
//     the replaced certificate's), so the events show exactly what was stored; a resource
//     changed meanwhile is read again (the job still pending) and the store retried.
//   - A temporary failure (authority or DNS provider unreachable, throttled, rate limited) is
//     INTERNAL_ERROR: retries_at is a backoff that doubles with each receive (CERT_RETRY_BACKOFF,
//     up to CERT_RETRY_MAX_BACKOFF), the message hidden until then, so it is retried without any
//     user action; its due entry is 15 minutes after retries_at, so the scheduler requests it
//     again only if the message was lost (dead-lettered after the queue's receive limit). A failure the owner must fix (missing or wrong CNAME, NXDOMAIN, wrong TXT, CAA
//     refusal) is DNS_ERROR, msg naming the record: retried when the policy is PATCHed (a new
//     job) and otherwise by the scheduler after CERT_DNS_RETRY (default a day).
//   - The due entries (D#due, sort key <time>#<account>#<resource>) hold each resource's next
//     time: its renewal, its failed job's retry, or, for a job just requested, JobGrace (15
//     minutes) later, the net for a job message lost on its way. The scheduler queries the entries up to now
//     (reading only those) and, per entry, sets a fresh pending job on the condition that the
//     resource's cert_due is still that entry, deleting the entry and writing the job's item in
//     the same transaction; a concurrent or repeated run finds the condition false and requests
//     nothing.
//   - The ACME account key is created once per deployment and directory (a conditional put of
//     the sealed key; the loser of a race reads the winner's) and registered on first use.
//
// Environment: CERT_JOBS_QUEUE_URL; the domains configuration (BASE_DOMAIN, DNS_ZONE,
// NAME_SERVERS, REGIONS: an agent ingress's event shows its ns_targets and region_domains); ACME_DIRECTORY (default Let's Encrypt) and ACME_CA_FILE
// (extra roots for the directory's TLS, pebble's locally); HOSTED_ZONE_ID and DELEGATION_SET_ID
// (Route 53) or CHALLTESTSRV_URL (pebble-challtestsrv's management API) for the challenge
// records;
// DNS_RESOLVER (host:port of the DNS server CNAMEs are checked through; default the system's);
// CERT_RENEW_BEFORE (default 720h), CERT_RETRY_BACKOFF (1m), CERT_RETRY_MAX_BACKOFF (6h),
// CERT_DNS_RETRY (24h), all Go durations.
package certs
