package eventsub_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"tunnelapi/shared/families/eventsub"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

const (
	streamARN = "arn:aws:kinesis:us-east-1:123456789012:stream/audit"
	roleARN   = "arn:aws:iam::123456789012:role/ngrok-events"
	akid      = "AKIAIOSFODNN7EXAMPLE"
	secretKey = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	ddKey     = "0123456789abcdef0123456789abcdef"
	azSecret  = "azure~client~secret~value"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func kinesisBody(description string) map[string]any {
	return map[string]any{"description": description, "format": "json", "target": map[string]any{
		"kinesis": map[string]any{"stream_arn": streamARN,
			"auth": map[string]any{"creds": map[string]any{"aws_access_key_id": akid, "aws_secret_access_key": secretKey}}}}}
}

func azureTarget() map[string]any {
	return map[string]any{"tenant_id": "contoso.onmicrosoft.com", "client_id": "11111111-2222-3333-4444-555555555555",
		"client_secret": azSecret, "logs_ingestion_uri": "https://dce-1.eastus-1.ingest.monitor.azure.com",
		"data_collection_rule_id": "dcr-00112233445566778899aabbccddeeff", "data_collection_stream_name": "Custom-NgrokEvents"}
}

func newDestination(t *testing.T, a *testkit.Account) string {
	t.Helper()
	return a.Do(t, "POST", "/event_destinations", kinesisBody("d")).Expect(t, http.StatusCreated)["id"].(string)
}

func TestDestinationsConformance(t *testing.T) {
	s := testkit.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: eventsub.EventDestinationsDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any { return kinesisBody("audit stream") },
		Update: map[string]any{"description": "renamed"},
		UpdateWants: map[string]any{"description": "renamed", "format": "json",
			"target": map[string]any{"kinesis": map[string]any{"stream_arn": streamARN,
				"auth": map[string]any{"creds": map[string]any{"aws_access_key_id": akid, "aws_secret_access_key": nil}, "role": nil}},
				"firehose": nil, "cloudwatch_logs": nil, "datadog": nil, "azure_logs_ingestion": nil}},
	})
}

func TestSubscriptionsConformance(t *testing.T) {
	s := testkit.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: eventsub.EventSubscriptionsDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			return map[string]any{"description": "keys", "sources": []any{map[string]any{"type": "api_key_created.v0"}},
				"destination_ids": []string{newDestination(t, a)}}
		},
		Update:      map[string]any{"metadata": `{"team":"sec"}`},
		UpdateWants: map[string]any{"metadata": `{"team":"sec"}`, "description": "keys"},
	})
}

// Every target kind is accepted in its documented shape, rendered with only its own member
// non-null, and never shows its secret.
func TestTargetKindsAndRedaction(t *testing.T) {
	s, a := testkit.AppAccount(t)
	creds := map[string]any{"creds": map[string]any{"aws_access_key_id": akid, "aws_secret_access_key": secretKey}}
	role := map[string]any{"role": map[string]any{"role_arn": roleARN}}
	cases := []struct {
		kind   string
		target map[string]any
		secret string
	}{
		{"kinesis", map[string]any{"stream_arn": streamARN, "auth": creds}, secretKey},
		{"kinesis", map[string]any{"stream_arn": "arn:aws-us-gov:kinesis:us-gov-west-1:123456789012:stream/x", "auth": role}, ""},
		{"firehose", map[string]any{"delivery_stream_arn": "arn:aws:firehose:eu-west-1:123456789012:deliverystream/fh", "auth": creds}, secretKey},
		{"cloudwatch_logs", map[string]any{"log_group_arn": "arn:aws:logs:us-west-2:123456789012:log-group:/ngrok/events:*", "auth": role}, ""},
		{"datadog", map[string]any{"api_key": ddKey, "ddtags": "env:prod", "service": "ngrok", "ddsite": "datadoghq.eu"}, ddKey},
		{"azure_logs_ingestion", azureTarget(), azSecret},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			created := a.Do(t, "POST", "/event_destinations", map[string]any{"target": map[string]any{c.kind: c.target}}).Expect(t, 201)
			id := created["id"].(string)
			if created["format"] != "json" {
				t.Fatalf("format %v", created["format"])
			}
			got := a.Do(t, "GET", "/event_destinations/"+id, nil)
			list := a.Do(t, "GET", "/event_destinations", nil)
			for _, body := range [][]byte{mustJSON(t, created), got.Body, list.Body} {
				if c.secret != "" && strings.Contains(string(body), c.secret) {
					t.Fatalf("secret returned: %s", body)
				}
			}
			tgt := got.Expect(t, 200)["target"].(map[string]any)
			for k, v := range tgt {
				if (k == c.kind) != (v != nil) {
					t.Fatalf("target.%s = %v", k, v)
				}
			}
			// The secret is sealed at rest: not in the stored item, and it opens only with
			// this destination's account and id.
			var it eventsub.EventDestinationItem
			if err := s.DB.Get(t.Context(), store.ResourceKey(a.AccountID, id), &it); err != nil {
				t.Fatal(err)
			}
			raw, _ := s.DB.GetMany(t.Context(), store.ResourceKey(a.AccountID, id))
			if c.secret != "" && strings.Contains(fmt.Sprint(raw[0]), c.secret) {
				t.Fatal("secret stored in plaintext")
			}
			if c.secret == "" {
				if it.Target.Secret != nil {
					t.Fatal("a role target stored a secret")
				}
				return
			}
			pt, err := s.Deps.Kit.Seal.Open(t.Context(), *it.Target.Secret, eventsub.SealAAD(a.AccountID, id))
			if err != nil || string(pt) != c.secret {
				t.Fatalf("sealed secret opens to %q, %v", pt, err)
			}
			if _, err := s.Deps.Kit.Seal.Open(t.Context(), *it.Target.Secret, eventsub.SealAAD(a.AccountID, ids.New(ids.EventDestination))); err == nil {
				t.Fatal("sealed secret opens on another destination")
			}
		})
	}
}

func mustJSON(t *testing.T, v map[string]any) []byte {
	t.Helper()
	return []byte(fmt.Sprint(v))
}

// Every bad destination input gets its code naming the field, and stores nothing.
func TestDestinationValidation(t *testing.T) {
	_, a := testkit.AppAccount(t)
	existing := newDestination(t, a)
	path := "/event_destinations/" + existing
	kin := func(auth any, arn string) map[string]any {
		return map[string]any{"target": map[string]any{"kinesis": map[string]any{"stream_arn": arn, "auth": auth}}}
	}
	creds := map[string]any{"creds": map[string]any{"aws_access_key_id": akid, "aws_secret_access_key": secretKey}}
	role := map[string]any{"role": map[string]any{"role_arn": roleARN}}
	dd := func(fields map[string]any) map[string]any {
		return map[string]any{"target": map[string]any{"datadog": fields}}
	}
	az := func(drop string, set map[string]any) map[string]any {
		t := azureTarget()
		delete(t, drop)
		for k, v := range set {
			t[k] = v
		}
		return map[string]any{"target": map[string]any{"azure_logs_ingestion": t}}
	}
	both := map[string]any{"role": role["role"], "creds": creds["creds"]}
	cases := []refusal{
		{"format", "POST", map[string]any{"format": "xml", "target": kin(creds, streamARN)["target"]}, "ERR_NGROK_235", "format"},
		{"no target", "POST", map[string]any{"format": "json"}, "ERR_NGROK_5100", "target"},
		{"empty target", "POST", map[string]any{"target": map[string]any{}}, "ERR_NGROK_5100", "target"},
		{"null targets", "POST", map[string]any{"target": map[string]any{"kinesis": nil, "datadog": nil}}, "ERR_NGROK_5100", "target"},
		{"two targets", "POST", map[string]any{"target": map[string]any{"kinesis": map[string]any{}, "datadog": map[string]any{}}}, "ERR_NGROK_5115", "target"},
		{"unknown target", "POST", map[string]any{"target": map[string]any{"s3": map[string]any{}}}, "ERR_NGROK_214", "target.s3"},
		{"no auth", "POST", kin(nil, streamARN), "ERR_NGROK_240", "target.kinesis.auth"},
		{"empty auth", "POST", kin(map[string]any{}, streamARN), "ERR_NGROK_240", "target.kinesis.auth"},
		{"two auths", "POST", kin(both, streamARN), "ERR_NGROK_5116", "target.kinesis.auth"},
		{"bad role arn", "POST", kin(map[string]any{"role": map[string]any{"role_arn": "arn:aws:iam::12:role/x"}}, streamARN), "ERR_NGROK_240", "target.kinesis.auth.role.role_arn"},
		{"role arn not a role", "POST", kin(map[string]any{"role": map[string]any{"role_arn": "arn:aws:iam::123456789012:user/x"}}, streamARN), "ERR_NGROK_240", "target.kinesis.auth.role.role_arn"},
		{"no role arn", "POST", kin(map[string]any{"role": map[string]any{}}, streamARN), "ERR_NGROK_240", "target.kinesis.auth.role.role_arn"},
		{"no key id", "POST", kin(map[string]any{"creds": map[string]any{"aws_secret_access_key": "x"}}, streamARN), "ERR_NGROK_240", "target.kinesis.auth.creds.aws_access_key_id"},
		{"no secret", "POST", kin(map[string]any{"creds": map[string]any{"aws_access_key_id": akid}}, streamARN), "ERR_NGROK_240", "target.kinesis.auth.creds.aws_secret_access_key"},
		{"no stream arn", "POST", kin(creds, ""), "ERR_NGROK_236", "target.kinesis.stream_arn"},
		{"garbage arn", "POST", kin(creds, "stream/audit"), "ERR_NGROK_236", "target.kinesis.stream_arn"},
		{"arn of another kind", "POST", kin(creds, "arn:aws:firehose:us-east-1:123456789012:deliverystream/x"), "ERR_NGROK_236", "target.kinesis.stream_arn"},
		{"arn bad region", "POST", kin(creds, "arn:aws:kinesis:moon:123456789012:stream/x"), "ERR_NGROK_236", "target.kinesis.stream_arn"},
		{"firehose arn is a stream", "POST", map[string]any{"target": map[string]any{"firehose": map[string]any{
			"delivery_stream_arn": streamARN, "auth": role}}}, "ERR_NGROK_236", "target.firehose.delivery_stream_arn"},
		{"log group arn", "POST", map[string]any{"target": map[string]any{"cloudwatch_logs": map[string]any{
			"log_group_arn": "arn:aws:logs:us-east-1:123456789012:log-stream:x", "auth": role}}}, "ERR_NGROK_236", "target.cloudwatch_logs.log_group_arn"},
		{"datadog no key", "POST", dd(map[string]any{"ddsite": "datadoghq.com"}), "ERR_NGROK_5133", "target.datadog.api_key"},
		{"datadog bad key", "POST", dd(map[string]any{"api_key": "nope"}), "ERR_NGROK_5133", "target.datadog.api_key"},
		{"datadog site", "POST", dd(map[string]any{"api_key": ddKey, "ddsite": "datadog.example.com"}), "ERR_NGROK_5134", "target.datadog.ddsite"},
		{"datadog wrong type", "POST", dd(map[string]any{"api_key": 5}), "ERR_NGROK_215", "target.datadog.api_key"},
		{"azure tenant", "POST", az("tenant_id", nil), "ERR_NGROK_236", "target.azure_logs_ingestion.tenant_id"},
		{"azure client", "POST", az("client_id", nil), "ERR_NGROK_236", "target.azure_logs_ingestion.client_id"},
		{"azure client not guid", "POST", az("", map[string]any{"client_id": "app"}), "ERR_NGROK_236", "target.azure_logs_ingestion.client_id"},
		{"azure secret", "POST", az("client_secret", nil), "ERR_NGROK_236", "target.azure_logs_ingestion.client_secret"},
		{"azure uri", "POST", az("logs_ingestion_uri", nil), "ERR_NGROK_236", "target.azure_logs_ingestion.logs_ingestion_uri"},
		{"azure uri not azure", "POST", az("", map[string]any{"logs_ingestion_uri": "https://169.254.169.254/latest"}), "ERR_NGROK_236", "target.azure_logs_ingestion.logs_ingestion_uri"},
		{"azure uri http", "POST", az("", map[string]any{"logs_ingestion_uri": "http://dce.eastus-1.ingest.monitor.azure.com"}), "ERR_NGROK_236", "target.azure_logs_ingestion.logs_ingestion_uri"},
		{"azure rule", "POST", az("data_collection_rule_id", nil), "ERR_NGROK_236", "target.azure_logs_ingestion.data_collection_rule_id"},
		{"azure stream", "POST", az("data_collection_stream_name", nil), "ERR_NGROK_236", "target.azure_logs_ingestion.data_collection_stream_name"},
		{"description", "POST", map[string]any{"description": strings.Repeat("x", 256), "target": kin(creds, streamARN)["target"]}, "ERR_NGROK_215", "description"},
		{"patch kind", "PATCH", dd(map[string]any{"api_key": ddKey}), "ERR_NGROK_5108", "target.datadog"},
		{"patch bad auth", "PATCH", kin(both, streamARN), "ERR_NGROK_5116", "target.kinesis.auth"},
		{"patch format", "PATCH", map[string]any{"format": "JSONL"}, "ERR_NGROK_235", "format"},
		{"patch empty", "PATCH", map[string]any{}, "ERR_NGROK_606", "body"},
		{"patch other id", "PATCH", map[string]any{"id": ids.New(ids.EventDestination), "description": "x"}, "ERR_NGROK_215", "id"},
		{"patch new key id without secret", "PATCH", kin(map[string]any{"creds": map[string]any{"aws_access_key_id": "AKIAZZZZZZZZZZZZZZZZ"}}, streamARN), "ERR_NGROK_240", "target.kinesis.auth.creds.aws_secret_access_key"},
	}
	expectRefused(t, a, "/event_destinations", path, cases)
}

// A PATCH keeps the stored secret when it omits it for the same credentials, and switching the
// authentication to a role drops it.
func TestDestinationPatchSecrets(t *testing.T) {
	s, a := testkit.AppAccount(t)
	id := newDestination(t, a)
	path := "/event_destinations/" + id
	secretOf := func() []byte {
		var it eventsub.EventDestinationItem
		if err := s.DB.Get(t.Context(), store.ResourceKey(a.AccountID, id), &it); err != nil {
			t.Fatal(err)
		}
		if it.Target.Secret == nil {
			return nil
		}
		pt, err := s.Deps.Kit.Seal.Open(t.Context(), *it.Target.Secret, eventsub.SealAAD(a.AccountID, id))
		if err != nil {
			t.Fatal(err)
		}
		return pt
	}
	other := "arn:aws:kinesis:us-east-1:123456789012:stream/other"
	got := a.Do(t, "PATCH", path, map[string]any{"target": map[string]any{"kinesis": map[string]any{"stream_arn": other,
		"auth": map[string]any{"creds": map[string]any{"aws_access_key_id": akid}}}}}).Expect(t, 200)
	if got["target"].(map[string]any)["kinesis"].(map[string]any)["stream_arn"] != other || string(secretOf()) != secretKey {
		t.Fatalf("patch without secret: %v, secret %q", got, secretOf())
	}
	a.Do(t, "PATCH", path, map[string]any{"target": map[string]any{"kinesis": map[string]any{"stream_arn": other,
		"auth": map[string]any{"creds": map[string]any{"aws_access_key_id": akid, "aws_secret_access_key": "rotated"}}}}}).Expect(t, 200)
	if string(secretOf()) != "rotated" {
		t.Fatal("secret not rotated")
	}
	a.Do(t, "PATCH", path, map[string]any{"target": map[string]any{"kinesis": map[string]any{"stream_arn": other,
		"auth": map[string]any{"role": map[string]any{"role_arn": roleARN}}}}}).Expect(t, 200)
	if secretOf() != nil {
		t.Fatal("a role target kept the old secret")
	}
}

// Every bad subscription input gets its code naming the field, and stores nothing.
func TestSubscriptionValidation(t *testing.T) {
	_, a, b := testkit.AppTwoAccounts(t)
	dest := newDestination(t, a)
	foreign := newDestination(t, b)
	sub := a.Do(t, "POST", "/event_subscriptions", map[string]any{"destination_ids": []string{dest},
		"sources": []any{map[string]any{"type": "api_key_created.v0"}}}).Expect(t, 201)
	path := "/event_subscriptions/" + sub["id"].(string)
	src := func(types ...string) []any {
		out := []any{}
		for _, t := range types {
			out = append(out, map[string]any{"type": t})
		}
		return out
	}
	many := []string{}
	for i := 0; i <= eventsub.MaxSubscriptionDests; i++ {
		many = append(many, ids.New(ids.EventDestination))
	}
	cases := []refusal{
		{"unknown type", "POST", map[string]any{"sources": src("api_key_created.v0", "api_key_exploded.v0")}, "ERR_NGROK_238", "sources[1].type"},
		{"type without version", "POST", map[string]any{"sources": src("api_key_created")}, "ERR_NGROK_238", "sources[0].type"},
		// Abuse reports are only created: their updated and deleted events never happen.
		{"type that never happens", "POST", map[string]any{"sources": src("abuse_report_created.v0", "abuse_report_updated.v0")}, "ERR_NGROK_238", "sources[1].type"},
		{"deleted type that never happens", "POST", map[string]any{"sources": src("abuse_report_deleted.v0")}, "ERR_NGROK_238", "sources[0].type"},
		{"source without type", "POST", map[string]any{"sources": []any{map[string]any{}}}, "ERR_NGROK_238", "sources[0].type"},
		{"duplicate type", "POST", map[string]any{"sources": src("api_key_created.v0", "api_key_created.v0")}, "ERR_NGROK_5127", "sources[1].type"},
		{"missing destination", "POST", map[string]any{"destination_ids": []string{dest, ids.New(ids.EventDestination)}}, "ERR_NGROK_215", "destination_ids[1]"},
		{"other account's destination", "POST", map[string]any{"destination_ids": []string{foreign}}, "ERR_NGROK_215", "destination_ids[0]"},
		{"not a destination id", "POST", map[string]any{"destination_ids": []string{sub["id"].(string)}}, "ERR_NGROK_215", "destination_ids[0]"},
		{"duplicate destination", "POST", map[string]any{"destination_ids": []string{dest, dest}}, "ERR_NGROK_215", "destination_ids[1]"},
		{"too many destinations", "POST", map[string]any{"destination_ids": many}, "ERR_NGROK_215", "destination_ids"},
		{"unknown field", "POST", map[string]any{"filter": "x"}, "ERR_NGROK_214", "filter"},
		{"metadata", "POST", map[string]any{"metadata": strings.Repeat("x", 4097)}, "ERR_NGROK_215", "metadata"},
		{"patch unknown type", "PATCH", map[string]any{"sources": src("nope.v0")}, "ERR_NGROK_238", "sources[0].type"},
		{"patch type that never happens", "PATCH", map[string]any{"sources": src("abuse_report_updated.v0")}, "ERR_NGROK_238", "sources[0].type"},
		{"patch missing destination", "PATCH", map[string]any{"destination_ids": []string{ids.New(ids.EventDestination)}}, "ERR_NGROK_215", "destination_ids[0]"},
		{"patch empty", "PATCH", map[string]any{}, "ERR_NGROK_606", "body"},
	}
	expectRefused(t, a, "/event_subscriptions", path, cases)
	// Refused subscriptions left no reference behind: the destination deletes.
	a.Do(t, "DELETE", path, nil).Expect(t, 204)
	a.Do(t, "DELETE", "/event_destinations/"+dest, nil).Expect(t, 204)
}

// PATCH with sources or destination_ids replaces the set, and references follow it: a
// destination dropped from every subscription may be deleted, one still used may not (5112).
func TestSubscriptionReplacesSetsAndReferences(t *testing.T) {
	s, a := testkit.AppAccount(t)
	d1, d2 := newDestination(t, a), newDestination(t, a)
	sub := a.Do(t, "POST", "/event_subscriptions", map[string]any{"destination_ids": []string{d1},
		"sources": []any{map[string]any{"type": "api_key_created.v0"}, map[string]any{"type": "api_key_deleted.v0"}}}).Expect(t, 201)
	path := "/event_subscriptions/" + sub["id"].(string)
	a.Do(t, "DELETE", "/event_destinations/"+d1, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_5112", "id")
	got := a.Do(t, "PATCH", path, map[string]any{"destination_ids": []string{d2},
		"sources": []any{map[string]any{"type": "tunnel_credential_created.v0"}}}).Expect(t, 200)
	if fmt.Sprint(got["sources"]) != fmt.Sprintf("[map[type:tunnel_credential_created.v0 uri:%s%s/sources/tunnel_credential_created.v0]]", s.Server.URL, path) {
		t.Fatalf("sources not replaced: %v", got["sources"])
	}
	if ds := got["destinations"].([]any); len(ds) != 1 || ds[0].(map[string]any)["id"] != d2 ||
		ds[0].(map[string]any)["uri"] != s.Server.URL+"/event_destinations/"+d2 {
		t.Fatalf("destinations not replaced: %v", got["destinations"])
	}
	a.Do(t, "DELETE", "/event_destinations/"+d2, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_5112", "id")
	a.Do(t, "DELETE", "/event_destinations/"+d1, nil).Expect(t, 204)
	// A PATCH of the destination still works while it is referenced.
	a.Do(t, "PATCH", "/event_destinations/"+d2, map[string]any{"description": "still used"}).Expect(t, 200)
	a.Do(t, "PATCH", path, map[string]any{"destination_ids": []string{}}).Expect(t, 200)
	a.Do(t, "DELETE", "/event_destinations/"+d2, nil).Expect(t, 204)
}

// Deleting a destination while a subscription referencing it is being created: exactly one of
// the two wins, never both.
func TestDeleteRacesSubscriptionCreate(t *testing.T) {
	_, a := testkit.AppAccount(t)
	outcomes := map[string]int{}
	for round := 0; round < 12; round++ {
		d := newDestination(t, a)
		both := testkit.AtOnce(2, func(i int) *testkit.Response {
			if i == 0 {
				return a.Do(t, "DELETE", "/event_destinations/"+d, nil)
			}
			return a.Do(t, "POST", "/event_subscriptions", map[string]any{"destination_ids": []string{d}})
		})
		del, sub := both[0], both[1]
		switch {
		case del.Status == 204 && sub.Status == 400:
			sub.ExpectError(t, 400, "ERR_NGROK_215", "destination_ids[0]")
			outcomes["delete won"]++
		case del.Status == 400 && sub.Status == 201:
			del.ExpectError(t, 400, "ERR_NGROK_5112", "id")
			outcomes["subscription won"]++
			a.Do(t, "DELETE", "/event_subscriptions/"+sub.JSON(t)["id"].(string), nil).Expect(t, 204)
			a.Do(t, "DELETE", "/event_destinations/"+d, nil).Expect(t, 204)
		default:
			t.Fatalf("round %d: delete %d %s, subscription %d %s", round, del.Status, del.Body, sub.Status, sub.Body)
		}
	}
	t.Logf("outcomes: %v", outcomes)
}

func TestSources(t *testing.T) {
	s, a, b := testkit.AppTwoAccounts(t)
	sub := a.Do(t, "POST", "/event_subscriptions", map[string]any{"sources": []any{map[string]any{"type": "api_key_created.v0"}}}).Expect(t, 201)
	id := sub["id"].(string)
	coll := "/event_subscriptions/" + id + "/sources"
	got := a.Do(t, "POST", coll, map[string]any{"type": "api_key_deleted.v0"}).Expect(t, 201)
	if got["type"] != "api_key_deleted.v0" || got["uri"] != s.Server.URL+coll+"/api_key_deleted.v0" {
		t.Fatalf("create: %v", got)
	}
	list := a.Do(t, "GET", coll, nil).Expect(t, 200)
	if list["uri"] != s.Server.URL+coll || len(list["sources"].([]any)) != 2 {
		t.Fatalf("list: %v", list)
	}
	if _, paged := list["next_page_uri"]; paged {
		t.Fatalf("sources list is not paginated: %v", list)
	}
	a.Do(t, "GET", coll+"/api_key_deleted.v0", nil).Expect(t, 200)
	// A source has no changeable member: the clients send {} or the path's values, and the
	// PATCH answers with the source unchanged.
	for _, body := range []any{nil, map[string]any{}, map[string]any{"subscription_id": id, "type": "api_key_deleted.v0"}} {
		got = a.Do(t, "PATCH", coll+"/api_key_deleted.v0", body).Expect(t, 200)
		if got["type"] != "api_key_deleted.v0" || got["uri"] != s.Server.URL+coll+"/api_key_deleted.v0" {
			t.Fatalf("update %v: %v", body, got)
		}
	}
	// The JavaScript client repeats the path's subscription_id in a source POST.
	a.Do(t, "POST", coll, map[string]any{"subscription_id": id, "type": "api_key_updated.v0"}).Expect(t, 201)
	a.Do(t, "DELETE", coll+"/api_key_deleted.v0", nil).Expect(t, 204)
	cases := []struct {
		name, method, path string
		body               any
		status             int
		code, field        string
	}{
		{"create duplicate", "POST", coll, map[string]any{"type": "api_key_created.v0"}, 400, "ERR_NGROK_5127", "type"},
		{"create unknown type", "POST", coll, map[string]any{"type": "nope"}, 400, "ERR_NGROK_238", "type"},
		{"create type that never happens", "POST", coll, map[string]any{"type": "abuse_report_deleted.v0"}, 400, "ERR_NGROK_238", "type"},
		{"create no type", "POST", coll, map[string]any{}, 400, "ERR_NGROK_238", "type"},
		{"create other subscription id in body", "POST", coll, map[string]any{"type": "ip_policy_created.v0", "subscription_id": ids.New(ids.EventSubscription)}, 400, "ERR_NGROK_215", "subscription_id"},
		{"create on missing subscription", "POST", "/event_subscriptions/" + ids.New(ids.EventSubscription) + "/sources", map[string]any{"type": "api_key_created.v0"}, 404, "ERR_NGROK_5123", "subscription_id"},
		{"list missing subscription", "GET", "/event_subscriptions/esb_nope/sources", nil, 404, "ERR_NGROK_5123", "subscription_id"},
		{"list query", "GET", coll + "?limit=1", nil, 400, "ERR_NGROK_231", "limit"},
		{"get absent source", "GET", coll + "/api_key_deleted.v0", nil, 404, "ERR_NGROK_5125", "type"},
		{"update absent source", "PATCH", coll + "/api_key_deleted.v0", map[string]any{}, 404, "ERR_NGROK_5125", "type"},
		{"update absent source repeating the path", "PATCH", coll + "/api_key_deleted.v0", map[string]any{"type": "api_key_deleted.v0"}, 404, "ERR_NGROK_5125", "type"},
		{"update on missing subscription", "PATCH", "/event_subscriptions/" + ids.New(ids.EventSubscription) + "/sources/api_key_updated.v0", map[string]any{}, 404, "ERR_NGROK_5123", "subscription_id"},
		{"update other type in body", "PATCH", coll + "/api_key_updated.v0", map[string]any{"type": "api_key_created.v0"}, 400, "ERR_NGROK_215", "type"},
		{"update other subscription in body", "PATCH", coll + "/api_key_updated.v0", map[string]any{"subscription_id": ids.New(ids.EventSubscription)}, 400, "ERR_NGROK_215", "subscription_id"},
		{"update unknown member", "PATCH", coll + "/api_key_updated.v0", map[string]any{"description": "x"}, 400, "ERR_NGROK_214", "description"},
		{"delete absent source", "DELETE", coll + "/api_key_deleted.v0", nil, 404, "ERR_NGROK_5125", "type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a.Do(t, c.method, c.path, c.body).ExpectError(t, c.status, c.code, c.field)
		})
	}
	// Another account sees no subscription there.
	b.Do(t, "GET", coll, nil).ExpectError(t, 404, "ERR_NGROK_5123", "subscription_id")
	b.Do(t, "DELETE", coll+"/api_key_created.v0", nil).ExpectError(t, 404, "ERR_NGROK_5123", "subscription_id")
	b.Do(t, "POST", coll, map[string]any{"type": "ip_policy_created.v0"}).ExpectError(t, 404, "ERR_NGROK_5123", "subscription_id")
	res := a.Do(t, "DELETE", coll+"/api_key_created.v0", nil)
	if res.Status != 204 || len(res.Body) != 0 {
		t.Fatalf("delete: %d %s", res.Status, res.Body)
	}
	final := a.Do(t, "GET", "/event_subscriptions/"+id, nil).Expect(t, 200)
	if fmt.Sprint(final["sources"]) != fmt.Sprintf("[map[type:api_key_updated.v0 uri:%s%s/api_key_updated.v0]]", s.Server.URL, coll) {
		t.Fatalf("sources after the sub-resource calls: %v", final["sources"])
	}
}

// The source types are the verbs each family's kind records (audit.AuditKinds, which go
// generate writes from the families' descriptors: three verbs each, but only created for abuse
// reports, which serve no update or delete, and the HTTPS edge routes' kind beside the edges'),
// and the four other types; no other.
func TestKnownTypes(t *testing.T) {
	for _, typ := range []string{"api_key_created.v0", "tcp_address_deleted.v0", "agent_session_stop.v0", "http_request_complete.v0",
		"bot_user_created.v0", "endpoint_updated.v0", "tunnel_group_backend_deleted.v0", "agent_ingress_created.v0",
		"static_backend_created.v0", "http_response_backend_updated.v0", "failover_backend_deleted.v0", "weighted_backend_created.v0",
		"tls_edge_updated.v0", "tcp_edge_deleted.v0", "kubernetes_operator_created.v0",
		"https_edge_deleted.v0", "https_edge_route_created.v0", "abuse_report_created.v0"} {
		if !eventsub.KnownType(typ) {
			t.Errorf("%s unknown", typ)
		}
	}
	for _, typ := range []string{"user_created.v0", "api_key_created.v1", "api_key_created", "", "abuse_report_updated.v0", "abuse_report_deleted.v0"} {
		if eventsub.KnownType(typ) {
			t.Errorf("%s known", typ)
		}
	}
	if all := eventsub.KnownTypes(); !slices.IsSorted(all) || !slices.Contains(all, "https_edge_route_deleted.v0") {
		t.Errorf("KnownTypes %v: not sorted, or without https_edge_route_deleted.v0", all)
	}
}

// refusal is a create (POST) or update (PATCH) body refused with code naming field.
type refusal struct {
	name, method string
	body         any
	code, field  string
}

// expectRefused sends each refusal to the collection (a POST) or to the item at path (a PATCH)
// and checks its 400, then that the collection holds no new item and the item is unchanged.
func expectRefused(t *testing.T, a *testkit.Account, collection, path string, cases []refusal) {
	t.Helper()
	listKey := strings.TrimPrefix(collection, "/")
	before, _ := a.WalkPages(t, collection, listKey)
	orig := a.Do(t, "GET", path, nil).Body
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := collection
			if c.method == "PATCH" {
				p = path
			}
			a.Do(t, c.method, p, c.body).ExpectError(t, http.StatusBadRequest, c.code, c.field)
		})
	}
	after, _ := a.WalkPages(t, collection, listKey)
	if len(after) != len(before) {
		t.Fatalf("refused creates stored %d items in %s", len(after)-len(before), collection)
	}
	if got := a.Do(t, "GET", path, nil).Body; string(got) != string(orig) {
		t.Fatalf("refused patches changed %s:\n%s\n%s", path, orig, got)
	}
}

// A destination may not name a role of the deployment's own AWS account (DEPLOYMENT_ACCOUNT_ID):
// create and update answer 400 naming role_arn and change nothing; a role of another account is
// accepted.
func TestRoleOfTheDeploymentAccountRefused(t *testing.T) {
	t.Setenv("DEPLOYMENT_ACCOUNT_ID", "123456789012")
	a := testkit.Start(t, eventsub.EventDestinationsDescriptor).NewAccount(t)
	target := func(role string) map[string]any {
		return map[string]any{"target": map[string]any{"kinesis": map[string]any{
			"stream_arn": "arn:aws:kinesis:us-east-1:123456789012:stream/events",
			"auth":       map[string]any{"role": map[string]any{"role_arn": role}}}}}
	}
	const field = "target.kinesis.auth.role.role_arn"
	own := target("arn:aws:iam::123456789012:role/tunnelapi-EventWorkerRole")
	before := a.Snapshot(t)
	a.Do(t, "POST", "/event_destinations", own).ExpectError(t, http.StatusBadRequest, eventsub.CodeBadAuth, field)
	a.Unchanged(t, before, "a refused create")
	id := a.Do(t, "POST", "/event_destinations", target("arn:aws:iam::210987654321:role/ngrok-events")).Expect(t, http.StatusCreated)["id"].(string)
	before = a.Snapshot(t)
	a.Do(t, "PATCH", "/event_destinations/"+id, own).ExpectError(t, http.StatusBadRequest, eventsub.CodeBadAuth, field)
	a.Unchanged(t, before, "a refused update")
}
