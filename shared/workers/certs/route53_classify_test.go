package certs

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/route53"

	"tunnelapi/shared/testing/standin"
)

// Route 53's answers are classified as the worker classifies every failure: a zone that cannot
// be served because another ingress's domain is its parent or child is DNS_ERROR naming the
// domain (the owner must resolve it); a zone of the same name left by a deleted ingress (its
// cleanup job not done yet) and throttling are INTERNAL_ERROR, retried.
func TestRoute53ErrorsClassified(t *testing.T) {
	creds := &standin.Credentials{}
	creds.Add("AKIDCLASSIFY", "classify-secret", "", time.Time{})
	st := standin.StartRoute53(creds)
	defer st.Close()
	st.AddDelegationSet("NSET", []string{"ns1.dns.example.net", "ns2.dns.example.net"})
	client := route53.New(route53.Options{Region: "us-east-1", BaseEndpoint: aws.String(st.URL), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDCLASSIFY", "classify-secret", "")})
	r := &Route53{Client: client, DelegationSetID: "NSET"}
	ctx := context.Background()
	if _, err := r.IngressZone(ctx, "agin_parent", "customer.example"); err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error, code, msg string) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		got, gotMsg := classify(err, []string{"x"})
		if got != code || !strings.Contains(gotMsg, msg) {
			t.Errorf("%s (%v): %s %q, want %s containing %q", what, err, got, gotMsg, code, msg)
		}
	}
	_, err := r.IngressZone(ctx, "agin_child", "agents.customer.example")
	check("a subdomain of another ingress's domain", err, DNSError, "agents.customer.example")
	_, err = r.IngressZone(ctx, "agin_again", "customer.example")
	check("the same domain while a deleted ingress's zone remains", err, InternalError, "retrying")
	st.Throttle(-1)
	_, err = (&Route53{Client: client, DelegationSetID: "NSET"}).IngressZone(ctx, "agin_throttled", "other.example")
	check("throttled", err, InternalError, "retrying")
}
