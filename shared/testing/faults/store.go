package faults

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

// Store is the way to a DynamoDB table with faults on it: a Proxy in front of DynamoDB Local
// and the DynamoDB middleware, on an AWS configuration whose client opens a connection per
// attempt, so that a toxic's toxicity is the fraction of attempts it meets (with keep-alive, a
// few long-lived connections would decide whether a whole history meets it at all).
type Store struct {
	// Options are the store's options with the proxy as endpoint, Config and the middleware.
	Options store.Options
	// Config is the AWS configuration with the per-attempt client, for the test's other
	// clients (SQS) to use as well.
	Config   aws.Config
	DynamoDB *DynamoDB
	Proxy    *Proxy
}

// NewStore returns the faulty way to the table o names, through a proxy named name, with
// cfg's credentials and region.
func NewStore(t testing.TB, name string, cfg aws.Config, o store.Options) *Store {
	t.Helper()
	cfg.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) { tr.DisableKeepAlives = true })
	s := &Store{Config: cfg, DynamoDB: &DynamoDB{}, Proxy: NewProxy(t, name, testkit.Endpoint(t))}
	o.Endpoint, o.Config = s.Proxy.URL, &s.Config
	o.APIOptions = append(o.APIOptions[:len(o.APIOptions):len(o.APIOptions)], s.DynamoDB.Option)
	s.Options = o
	return s
}

// Open opens the store through the proxy and the middleware.
func (s *Store) Open(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), s.Options)
	if err != nil {
		t.Fatal(err)
	}
	return db
}
