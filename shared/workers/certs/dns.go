package certs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"
)

// DNS is where the worker publishes DNS-01 challenge records: Route 53 in AWS, challtestsrv's
// management API locally. Names are fully qualified, without the trailing dot.
type DNS interface {
	SetTXT(ctx context.Context, name, value string) error
	ClearTXT(ctx context.Context, name string) error
}

// Resolver looks up what a name is a CNAME to: the user's _acme-challenge record of a custom
// domain is checked through it before an order is placed.
type Resolver interface {
	LookupCNAME(ctx context.Context, host string) (string, error)
}

// NewResolver resolves through the DNS server at addr (host:port; challtestsrv locally) or, when
// addr is empty, through the system's resolver.
func NewResolver(addr string) Resolver {
	if addr == "" {
		return net.DefaultResolver
	}
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
}

// ChallTestSrv publishes records through pebble-challtestsrv's management API at URL.
type ChallTestSrv struct {
	URL    string
	Client *http.Client
}

// SetTXT adds a TXT record value at name.
func (c ChallTestSrv) SetTXT(ctx context.Context, name, value string) error {
	return c.post(ctx, "/set-txt", map[string]string{"host": fqdn(name), "value": value})
}

// ClearTXT removes every TXT record at name.
func (c ChallTestSrv) ClearTXT(ctx context.Context, name string) error {
	return c.post(ctx, "/clear-txt", map[string]string{"host": fqdn(name)})
}

// SetCNAME makes name a CNAME to target (tests play the domain's owner with it).
func (c ChallTestSrv) SetCNAME(ctx context.Context, name, target string) error {
	return c.post(ctx, "/set-cname", map[string]string{"host": fqdn(name), "target": fqdn(target)})
}

// ClearCNAME removes the CNAME at name.
func (c ChallTestSrv) ClearCNAME(ctx context.Context, name string) error {
	return c.post(ctx, "/clear-cname", map[string]string{"host": fqdn(name)})
}

func (c ChallTestSrv) post(ctx context.Context, path string, body any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(c.URL, "/")+path, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("challtestsrv %s: %w", path, err)
	}
	hc := c.Client
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("challtestsrv %s: %w", path, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("challtestsrv %s: status %d", path, resp.StatusCode)
	}
	return nil
}

// Route53API is the part of the Route 53 client the worker calls.
type Route53API interface {
	ChangeResourceRecordSets(ctx context.Context, in *route53.ChangeResourceRecordSetsInput, opts ...func(*route53.Options)) (*route53.ChangeResourceRecordSetsOutput, error)
	route53.GetChangeAPIClient
}

// Route53 publishes records in the service's hosted zone (template.yaml's HostedZone; the
// function's role may change only that zone). A challenge's TXT record is short-lived: TTL 60.
type Route53 struct {
	Client Route53API
	ZoneID string
}

// SetTXT upserts the TXT record at name with value and waits until Route 53's name servers
// serve it (INSYNC), so the authority never looks before it is there.
func (r Route53) SetTXT(ctx context.Context, name, value string) error {
	out, err := r.change(ctx, r53types.ChangeActionUpsert, name, value)
	if err != nil {
		return err
	}
	w := route53.NewResourceRecordSetsChangedWaiter(r.Client)
	if err := w.Wait(ctx, &route53.GetChangeInput{Id: out.ChangeInfo.Id}, 2*time.Minute); err != nil {
		return fmt.Errorf("route53: waiting for TXT %s: %w", name, err)
	}
	return nil
}

// ClearTXT deletes the TXT record at name. Route 53 deletes only an exact record set, and the
// value is not known here; an upsert to a placeholder, then its deletion, removes whatever was
// there.
func (r Route53) ClearTXT(ctx context.Context, name string) error {
	if _, err := r.change(ctx, r53types.ChangeActionUpsert, name, "cleared"); err != nil {
		return err
	}
	_, err := r.change(ctx, r53types.ChangeActionDelete, name, "cleared")
	return err
}

func (r Route53) change(ctx context.Context, action r53types.ChangeAction, name, value string) (*route53.ChangeResourceRecordSetsOutput, error) {
	out, err := r.Client.ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{
		HostedZoneId: aws.String(r.ZoneID),
		ChangeBatch: &r53types.ChangeBatch{Changes: []r53types.Change{{Action: action, ResourceRecordSet: &r53types.ResourceRecordSet{
			Name: aws.String(fqdn(name)), Type: r53types.RRTypeTxt, TTL: aws.Int64(60),
			ResourceRecords: []r53types.ResourceRecord{{Value: aws.String(`"` + value + `"`)}},
		}}}},
	})
	if err != nil {
		return nil, fmt.Errorf("route53 %s TXT %s: %w", action, name, err)
	}
	return out, nil
}

// fqdn is name with the trailing dot DNS APIs want.
func fqdn(name string) string { return strings.TrimSuffix(name, ".") + "." }
