package abuse

import (
	"context"
	"net/url"
	"slices"
	"strings"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// Limits on a report, which keep its item far below DynamoDB's item size.
const (
	MaxURLs     = 100
	MaxURLBytes = 2048
)

// StatusPending is a report's and each hostname's status until the operator reviews them.
const StatusPending = "PENDING"

// ReportItem is a stored abuse report.
type ReportItem struct {
	store.Meta
	URLs      []string         `dynamodbav:"urls"`
	Metadata  string           `dynamodbav:"metadata"`
	Status    string           `dynamodbav:"status"`
	Hostnames []HostnameStatus `dynamodbav:"hostnames"`
}

// HostnameStatus is one hostname parsed from a report's URLs and what was done about it.
type HostnameStatus struct {
	Hostname string `dynamodbav:"hostname" json:"hostname"`
	Status   string `dynamodbav:"status" json:"status"`
}

// ReportJSON is the wire form of a report, in the platform's member order.
type ReportJSON struct {
	ID        string           `json:"id"`
	URI       string           `json:"uri"`
	CreatedAt string           `json:"created_at"`
	URLs      []string         `json:"urls"`
	Metadata  string           `json:"metadata,omitempty"`
	Status    string           `json:"status"`
	Hostnames []HostnameStatus `json:"hostnames"`
}

// reportBody is a create body: the platform's AbuseReportCreate.
type reportBody struct {
	URLs     *[]string `json:"urls"`
	Metadata *string   `json:"metadata"`
}

// ReportsDescriptor is the /abuse_reports family.
var ReportsDescriptor = &resource.Descriptor{
	Path: "/abuse_reports", Prefix: ids.AbuseReport, EventKind: "abuse_report",
	Operations: resource.OpCreate | resource.OpGet,
	Binding:    func() resource.Binding { return resource.Bind(newReports) },
}

// Reports is the abuse report family's rules.
type Reports struct {
	*resource.Family[ReportItem, *ReportItem]
}

func newReports(f *resource.Family[ReportItem, *ReportItem]) Reports { return Reports{f} }

// Render returns a report as GET returns it.
func (f Reports) Render(r *api.Request, it *ReportItem) any {
	return ReportJSON{ID: it.ID, URI: resource.URI(r, f.Path, it.ID), CreatedAt: api.Timestamp(it.CreatedAt), URLs: it.URLs,
		Metadata: it.Metadata, Status: it.Status, Hostnames: it.Hostnames}
}

// Create fills a new report from the body: its URLs, as sent, and the hostnames they name,
// each once in the order first named, all pending review.
func (Reports) Create(ctx context.Context, r *api.Request, it *ReportItem, m *resource.Mutation) (any, error) {
	var in reportBody
	if err := api.Decode(r, &in); err != nil {
		return nil, err
	}
	if err := api.CheckText(api.TextCodes{Metadata: api.CodeBadFieldValue}, api.Text{Metadata: in.Metadata}); err != nil {
		return nil, err
	}
	hostnames, err := parseURLs(in.URLs)
	if err != nil {
		return nil, err
	}
	it.URLs, it.Status = *in.URLs, StatusPending
	api.Set(&it.Metadata, in.Metadata)
	for _, h := range hostnames {
		it.Hostnames = append(it.Hostnames, HostnameStatus{Hostname: h, Status: StatusPending})
	}
	return nil, nil
}

// parseURLs checks a report's urls (required: one to MaxURLs absolute http or https URLs with
// a host) and returns the hostnames they name, lower-cased, each once.
func parseURLs(urls *[]string) ([]string, error) {
	if urls == nil || len(*urls) == 0 {
		return nil, api.Invalid("urls", "urls is required: the list of URLs with suspected abusive content")
	}
	if len(*urls) > MaxURLs {
		return nil, api.Invalid("urls", "urls lists %d URLs; a report may list at most %d", len(*urls), MaxURLs)
	}
	var hostnames []string
	for i, raw := range *urls {
		if len(raw) > MaxURLBytes {
			return nil, api.Invalid("urls", "urls[%d] is %d bytes long; the limit is %d bytes", i, len(raw), MaxURLBytes)
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			return nil, api.Invalid("urls", "urls[%d] %s is not an absolute http or https URL with a host", i, api.Describe(raw))
		}
		if h := strings.ToLower(u.Hostname()); !slices.Contains(hostnames, h) {
			hostnames = append(hostnames, h)
		}
	}
	return hostnames, nil
}
