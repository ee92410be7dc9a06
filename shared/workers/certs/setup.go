package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/route53"

	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/seal/kmsseal"
	"tunnelapi/shared/platform/store"
)

// FromConfig builds the worker configured by c with no network I/O.
func FromConfig(ctx context.Context, c config.CertWorker, log *slog.Logger) (*Worker, error) {
	cfg := c.AWSConfig()
	db, err := store.Open(ctx, c.StoreOptions())
	if err != nil {
		return nil, err
	}
	// The worker seals certificate and account keys, with KMS in AWS.
	c.Seal.NewKMS = kmsseal.New
	return New(db, queue.NewClient(cfg, c.SQSEndpoint), seal.New(cfg, c.Seal), c, log)
}

// New builds a worker of db's table taking jobs from c.QueueURL through q, configured by c.
func New(db *store.DB, q queue.API, sealer seal.Sealer, c config.CertWorker, log *slog.Logger) (*Worker, error) {
	hc, err := acmeHTTPClient(c.ACMECAFile)
	if err != nil {
		return nil, err
	}
	w := &Worker{DB: db, SQS: q, QueueURL: c.QueueURL, Seal: sealer, Log: log, Domains: &domains.Config{Domains: c.Domains},
		Issuer:      &Issuer{Directory: c.ACMEDirectory, HTTPClient: hc, DB: db, Seal: sealer, Log: log},
		Resolver:    NewResolver(c.DNSResolver),
		RenewBefore: c.RenewBefore, Backoff: c.RetryBackoff, MaxBackoff: c.RetryMaxBackoff, DNSRetry: c.DNSRetry}
	switch {
	case c.ChallTestSrvURL != "":
		w.DNS = ChallTestSrv{URL: c.ChallTestSrvURL}
	case c.HostedZoneID != "":
		w.DNS = &Route53{Client: route53.NewFromConfig(c.AWSConfig()), ZoneID: c.HostedZoneID, DelegationSetID: c.DelegationSetID}
	default:
		return nil, fmt.Errorf("certs: neither HOSTED_ZONE_ID (Route 53) nor CHALLTESTSRV_URL is set: no DNS provider for challenges")
	}
	return w, nil
}

// acmeHTTPClient trusts the system's roots and, when caFile is set, the roots in it (pebble's
// test CA locally).
func acmeHTTPClient(caFile string) (*http.Client, error) {
	hc := &http.Client{Timeout: 30 * time.Second}
	if caFile == "" {
		return hc, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("ACME_CA_FILE: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("ACME_CA_FILE %s holds no PEM certificate", caFile)
	}
	hc.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, Proxy: http.ProxyFromEnvironment}
	return hc, nil
}

// Main is the certificate worker Lambda's whole main.
func Main() {
	queue.Start(config.LoadCertWorker, FromConfig)
}
