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

	"tunnelapi/shared/platform/awsconfig"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"

	// The worker seals certificate and account keys with KMS in AWS.
	_ "tunnelapi/shared/platform/seal/kmsseal"
)

// LetsEncrypt is the default ACME directory.
const LetsEncrypt = "https://acme-v02.api.letsencrypt.org/directory"

// FromEnv builds the worker from the environment with no network I/O (see the package doc for
// the variables).
func FromEnv(ctx context.Context, log *slog.Logger) (*Worker, error) {
	cfg := awsconfig.FromEnv()
	db, err := store.Open(ctx, store.Options{Config: &cfg})
	if err != nil {
		return nil, err
	}
	return New(db, queue.NewClient(cfg), os.Getenv("CERT_JOBS_QUEUE_URL"), seal.FromEnv(cfg), log)
}

// New builds a worker of db's table taking jobs from queueURL, with the rest of its
// configuration from the environment.
func New(db *store.DB, q queue.API, queueURL string, sealer seal.Sealer, log *slog.Logger) (*Worker, error) {
	hc, err := acmeHTTPClient(os.Getenv("ACME_CA_FILE"))
	if err != nil {
		return nil, err
	}
	w := &Worker{DB: db, SQS: q, QueueURL: queueURL, Seal: sealer, Log: log,
		Issuer:      &Issuer{Directory: envOr("ACME_DIRECTORY", LetsEncrypt), HTTPClient: hc, DB: db, Seal: sealer, Log: log},
		Resolver:    NewResolver(os.Getenv("DNS_RESOLVER")),
		RenewBefore: envDuration("CERT_RENEW_BEFORE", DefaultRenewBefore), Backoff: envDuration("CERT_RETRY_BACKOFF", DefaultBackoff),
		MaxBackoff: envDuration("CERT_RETRY_MAX_BACKOFF", DefaultMaxBackoff), DNSRetry: envDuration("CERT_DNS_RETRY", DefaultDNSRetry)}
	switch {
	case os.Getenv("CHALLTESTSRV_URL") != "":
		w.DNS = ChallTestSrv{URL: os.Getenv("CHALLTESTSRV_URL")}
	case os.Getenv("HOSTED_ZONE_ID") != "":
		w.DNS = &Route53{Client: route53.NewFromConfig(awsconfig.FromEnv()), ZoneID: os.Getenv("HOSTED_ZONE_ID"),
			DelegationSetID: os.Getenv("DELEGATION_SET_ID")}
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

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil && d > 0 {
		return d
	}
	return def
}

// Main is the certificate worker Lambda's whole main.
func Main() {
	queue.Start(FromEnv)
}
