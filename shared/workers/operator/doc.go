// Package operator is the operator's interface to a deployment's tenants, apart from the
// tenants' API and never reachable with a tenant's key: its Routes are authorized in AWS by API
// Gateway's IAM authorization (template.yaml), then by the function for the principals it
// admits (Principals, on every request), and locally by a Verifier of the signature of the
// local server's own credentials.
//
// A tenant is created (principals.Bootstrap: its first admin key shown once), listed, read,
// suspended (its keys refused with ERR_NGROK_205; the event worker leaves its events on the
// queue and the scheduler defers its renewals), resumed, and deleted: Erase marks it deleting
// (its keys refused from then on) and deletes every item of it by Query of its own partitions,
// with what each family's Descriptor.Release frees elsewhere; an erasure cut short by its time
// budget resumes when asked again.
//
// Export and Import move a tenant. They run beside the operator's command line, not in this
// function: they page through and create with the tenant's own API, using an admin key the
// route POST /operator/tenants/{id}/keys issues, so an export is exactly what the API renders,
// an import goes through exactly the checks and side effects of the API's creates, either works
// against any deployment, and no request outlasts API Gateway's timeout however large the
// tenant. Import orders creates by the ids each object names and remaps them; values a read
// never renders (secret values, private keys, credentials, binding requests) are named in each
// line's Supply and must be filled in; tokens, SSH CA keys and reserved address ports are new.
// Import refuses a file with a line whose path is not a family's collection before it sends
// anything, and Client sends only to its base URL's origin and follows no redirect, so the
// tenant's admin key never leaves for a URL a file names.
// Domains and SSH keys are unique in a deployment: a tenant moved within one is deleted first.
package operator
