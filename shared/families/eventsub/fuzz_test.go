package eventsub_test

import (
	"net/http"
	"sync"
	"testing"

	"tunnelapi/shared/testing/testkit"
)

var (
	fuzzOnce    sync.Once
	fuzzAccount *testkit.Account
	fuzzDest    string
	fuzzSub     string
)

// fuzzSetup makes one account with a destination and a subscription for every fuzz input.
func fuzzSetup(t *testing.T) *testkit.Account {
	s := testkit.App(t)
	fuzzOnce.Do(func() {
		fuzzAccount = s.NewAccount(t)
		fuzzDest = newDestination(t, fuzzAccount)
		fuzzSub = fuzzAccount.Do(t, "POST", "/event_subscriptions", map[string]any{"destination_ids": []string{fuzzDest}}).Expect(t, 201)["id"].(string)
	})
	return fuzzAccount
}

// checkOutcome accepts a success or a 4xx in the error envelope; never a 5xx.
func checkOutcome(t *testing.T, res *testkit.Response, ok ...int) {
	for _, s := range ok {
		if res.Status == s {
			return
		}
	}
	if res.Status < 400 || res.Status > 499 {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	res.ExpectError(t, res.Status, "", "")
}

// Any destination body gets a 201/200 or a 4xx naming its problem: never a 5xx or a panic.
func FuzzDestinationBody(f *testing.F) {
	for _, seed := range []string{
		`{"target":{"kinesis":{"stream_arn":"arn:aws:kinesis:us-east-1:123456789012:stream/s","auth":{"role":{"role_arn":"arn:aws:iam::123456789012:role/r"}}}}}`,
		`{"format":"JSON","target":{"datadog":{"api_key":"0123456789abcdef0123456789abcdef","ddsite":"us5.datadoghq.com"}}}`,
		`{"target":{"firehose":{"delivery_stream_arn":"arn:aws:firehose:eu-west-1:123456789012:deliverystream/f","auth":{"creds":{"aws_access_key_id":"AKIAIOSFODNN7EXAMPLE","aws_secret_access_key":"x"}}}}}`,
		`{"target":{"cloudwatch_logs":{"log_group_arn":"arn:aws:logs:us-east-1:123456789012:log-group:g:*","auth":{}}}}`,
		`{"target":{"azure_logs_ingestion":{"tenant_id":"t","client_id":"11111111-2222-3333-4444-555555555555","client_secret":"s","logs_ingestion_uri":"https://x.ingest.monitor.azure.com","data_collection_rule_id":"dcr-00112233445566778899aabbccddeeff","data_collection_stream_name":"Custom-X"}}}`,
		`{"target":{"kinesis":null,"datadog":{}}}`, `{"target":[]}`, `{"target":{"kinesis":{"auth":{"role":{"role_arn":7}}}}}`,
		`{"description":"\u0000","format":null}`, `[]`, `null`, `{"target":{"kinesis":{"stream_arn":"arn:::::"}}}`, `{`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		a := fuzzSetup(t)
		checkOutcome(t, a.Do(t, "POST", "/event_destinations", body), http.StatusCreated)
		checkOutcome(t, a.Do(t, "PATCH", "/event_destinations/"+fuzzDest, body), http.StatusOK)
	})
}

// Any subscription or source body gets a success or a 4xx: never a 5xx or a panic.
func FuzzSubscriptionBody(f *testing.F) {
	for _, seed := range []string{
		`{"sources":[{"type":"api_key_created.v0"}],"destination_ids":[]}`,
		`{"sources":[{"type":"api_key_created.v0"},{"type":"api_key_created.v0"}]}`,
		`{"sources":[{}],"destination_ids":["ed_x"]}`, `{"destination_ids":["ed_2Z5wYbW8xIbhnCgGZg5WJ6T4Fzp"]}`,
		`{"sources":null,"metadata":"m"}`, `{"sources":{}}`, `{"type":"tcp_address_deleted.v0"}`, `{"type":""}`,
		`{"subscription_id":"esb_1","type":"api_key_updated.v0"}`, `{}`, `"x"`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		a := fuzzSetup(t)
		res := a.Do(t, "POST", "/event_subscriptions", body)
		checkOutcome(t, res, http.StatusCreated)
		if res.Status == http.StatusCreated {
			a.Do(t, "DELETE", "/event_subscriptions/"+res.JSON(t)["id"].(string), nil).Expect(t, 204)
		}
		checkOutcome(t, a.Do(t, "PATCH", "/event_subscriptions/"+fuzzSub, body), http.StatusOK)
		checkOutcome(t, a.Do(t, "POST", "/event_subscriptions/"+fuzzSub+"/sources", body), http.StatusCreated)
		checkOutcome(t, a.Do(t, "PATCH", "/event_subscriptions/"+fuzzSub+"/sources/api_key_created.v0", body), http.StatusOK)
	})
}
