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
)

// Records is a DNS zone the worker publishes DNS-01 challenge records in. Names are fully
// qualified, without the trailing dot. A zone whose records take a while to be served also
// implements Syncer.
type Records interface {
	SetTXT(ctx context.Context, name, value string) error
	ClearTXT(ctx context.Context, name string) error
}

// Syncer is a zone whose records are served some time after SetTXT returns (Route 53's name
// servers): WaitTXT returns once value at name is served.
type Syncer interface {
	WaitTXT(ctx context.Context, name, value string) error
}

// DNS is where the worker publishes challenge records: Route 53 in AWS, challtestsrv's
// management API locally. The service's zone holds custom domains'
// acme_challenge_cname_targets; an agent ingress domain, delegated to the service, has a zone
// of its own.
//
// Agent ingress domains are delegated to the service: the challenge record is written at
// _acme-challenge.<region domain> in the ingress domain's own zone (IngressZone). A custom
// reserved domain is validated through the user's CNAME from _acme-challenge.<domain> to its
// acme_challenge_cname_target, which the worker checks first (a missing or wrong CNAME is
// DNS_ERROR naming the record to create) and then writes the record at the target, in the
// service's zone (ServiceZone). Locally challtestsrv is every zone at once.
type DNS interface {
	ServiceZone() Records
	// IngressZone returns the zone of the agent ingress id's domain, creating it the first time.
	IngressZone(ctx context.Context, id, domain string) (Records, error)
	// DeleteIngressZone deletes that zone and its records; there being none is success.
	DeleteIngressZone(ctx context.Context, id, domain string) error
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

// ServiceZone is challtestsrv itself: it answers for every name.
func (c ChallTestSrv) ServiceZone() Records { return c }

// IngressZone is challtestsrv itself: it answers for every name.
func (c ChallTestSrv) IngressZone(context.Context, string, string) (Records, error) { return c, nil }

// DeleteIngressZone has nothing to delete: challtestsrv keeps no zones.
func (c ChallTestSrv) DeleteIngressZone(context.Context, string, string) error { return nil }

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

// fqdn is name with the trailing dot DNS APIs want.
func fqdn(name string) string { return strings.TrimSuffix(name, ".") + "." }
