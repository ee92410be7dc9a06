// Package certs is the certificate automation: the certificate worker (functions/cert_worker,
// triggered by the certificate jobs queue) obtains managed certificates for reserved domains
// and agent ingresses over ACME, and the scheduler (functions/scheduler, on an EventBridge
// schedule) requests their renewals and the retries of failed jobs.
//
// How a job flows, fails, is retried and renewed, and what the worker reads from its
// environment, is on Worker; where challenge records go on DNS and Route53; why acmez and not
// lego on Issuer.
package certs
