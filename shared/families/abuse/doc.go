// Package abuse is the abuse report family: /abuse_reports, create and get only, as the
// platform serves it. A report names URLs suspected of abusive content; the hostnames parsed
// from them are listed with their own status. Reports are reviewed by the deployment's
// operator: a new report and each of its hostnames are PENDING, its creation records the
// abuse_report_created.v0 event, and nothing in the service acts on a report or changes it
// afterwards. Lists, updates and deletes of reports are not routes of the API at all.
package abuse
