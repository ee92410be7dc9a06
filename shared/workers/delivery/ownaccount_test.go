package delivery_test

import (
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/app"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/delivery"
)

// deploymentAccount is the AWS account the tests' deployment runs in: testRole's.
const deploymentAccount = "123456789012"

// The worker never assumes a role of the deployment's own AWS account (DEPLOYMENT_ACCOUNT_ID),
// whatever a destination names (one stored before the API refused such roles, here through an
// instance that does not know the account): the delivery fails without an AssumeRole call and
// dead-letters naming the reason, while a role of another account is assumed as before.
func TestNoRoleOfTheDeploymentAccount(t *testing.T) {
	t.Setenv("DEPLOYMENT_ACCOUNT_ID", deploymentAccount)
	h := newHarness(t, nil)
	os.Unsetenv("DEPLOYMENT_ACCOUNT_ID")
	_, older := h.s.Instance(t, app.Families...)
	os.Setenv("DEPLOYMENT_ACCOUNT_ID", deploymentAccount)

	a := h.s.NewAccount(t)
	own := a.Do(t, "POST", older.URL+"/event_destinations", map[string]any{"target": h.kinesisRole("own-account")}).Expect(t, http.StatusCreated)["id"].(string)
	elsewhere := "arn:aws:iam::210987654321:role/ngrok-events"
	other := destination(t, a, map[string]any{"kinesis": map[string]any{"stream_arn": "arn:aws:kinesis:" + region + ":210987654321:stream/other-account",
		"auth": map[string]any{"role": map[string]any{"role_arn": elsewhere}}}})
	subscribe(t, a, []string{"api_key_created.v0"}, own, other)
	a.Do(t, "POST", "/api_keys", map[string]any{}).Expect(t, http.StatusCreated)

	eventually(t, 10*time.Second, "the other account's stream", func() bool { return len(h.st.Kinesis.Received()) == 1 })
	dlq := h.s.Queues.Drain(t, h.s.Queues.DLQ, 20*time.Second)
	if len(dlq) != 1 {
		t.Fatalf("%d DLQ messages, want 1 (the own account's role)", len(dlq))
	}
	attr := func(k string) string {
		if v, ok := dlq[0].MessageAttributes[k]; ok && v.StringValue != nil {
			return *v.StringValue
		}
		return ""
	}
	if attr(delivery.AttrDestination) != own || !strings.Contains(attr(delivery.AttrLastError), "deployment's own AWS account") {
		t.Fatalf("DLQ message of destination %q, error %q; want %s refused for its role's account", attr(delivery.AttrDestination), attr(delivery.AttrLastError), own)
	}
	for _, call := range h.st.STS.Assumed() {
		if call.Get("RoleArn") == testRole {
			t.Fatalf("the worker assumed %s, a role of the deployment's own account", testRole)
		}
	}
	if r := h.st.Kinesis.Received(); len(r) != 1 || !strings.HasSuffix(r[0].Target, ":stream/other-account") {
		t.Fatalf("records received: %+v, want one on other-account", r)
	}
}

// template.yaml denies the event worker sts:AssumeRole on every role of the deployment's own
// account, so that even a role there that trusts the worker without checking ExternalId cannot
// be assumed, and gives it that account (DEPLOYMENT_ACCOUNT_ID) to refuse such roles itself.
func TestTemplateDeniesOwnAccountRoles(t *testing.T) {
	fn, ok := testkit.TemplateFunctions(t, "../../../template.yaml")["EventWorkerFunction"]
	if !ok {
		t.Fatal("template.yaml has no EventWorkerFunction")
	}
	if v, _ := fn.Environment.Variables["DEPLOYMENT_ACCOUNT_ID"].(map[string]any); v["Ref"] != "AWS::AccountId" {
		t.Errorf("EventWorkerFunction's DEPLOYMENT_ACCOUNT_ID is %v, want { Ref: AWS::AccountId }", fn.Environment.Variables["DEPLOYMENT_ACCOUNT_ID"])
	}
	const ownRoles = "arn:${AWS::Partition}:iam::${AWS::AccountId}:role/*"
	denied := false
	for _, p := range fn.Policies {
		for _, s := range p.Statement {
			actions, _ := s.Action.([]any)
			if a, ok := s.Action.(string); ok {
				actions = []any{a}
			}
			res, _ := s.Resource.(map[string]any)
			if s.Effect == "Deny" && slices.Contains(actions, any("sts:AssumeRole")) && res["Fn::Sub"] == ownRoles {
				denied = true
			}
		}
	}
	if !denied {
		t.Fatalf("EventWorkerFunction's policies do not deny sts:AssumeRole on %s", ownRoles)
	}
}
