// Package scheduler is the scheduler (functions/scheduler, on an EventBridge schedule): it
// requests the certificate jobs that have come due, renewals and the retries of failed jobs,
// which the certificate worker (package certs, whose doc describes how a job flows) then runs.
//
// It is a package of its own, apart from the worker, so that the scheduler's function links
// only the table and the due entries' types: not the ACME client, the DNS providers, KMS or
// the stream reader the worker needs.
package scheduler
