package operator_test

import (
	"net/http"
	"strings"
	"testing"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"tunnelapi/shared/workers/operator"
)

// Which callers (API Gateway's userArn) each kind of listed principal admits: an account's root
// any principal of that account in that partition, a user that user only, a role each of its
// sessions (matched by the role's name, as STS names them, without its path) and itself.
func TestPrincipalsAdmit(t *testing.T) {
	const acct, other = "123456789012", "210987654321"
	cases := []struct {
		listed  operator.Principals
		admits  []string
		refuses []string
	}{
		{operator.Principals{"arn:aws:iam::" + acct + ":root"},
			[]string{"arn:aws:iam::" + acct + ":root", "arn:aws:iam::" + acct + ":user/operator", "arn:aws:iam::" + acct + ":user/ci/deployer",
				"arn:aws:sts::" + acct + ":assumed-role/Admin/alice", "arn:aws:sts::" + acct + ":federated-user/bob"},
			[]string{"arn:aws:iam::" + other + ":user/operator", "arn:aws:sts::" + other + ":assumed-role/Admin/alice",
				"arn:aws-cn:iam::" + acct + ":user/operator", "arn:aws:s3:::" + acct, "arn:aws:iam::" + acct, "AIDAEXAMPLE", "", "arn:aws:iam:us-east-1:" + acct + ":user/x"}},
		{operator.Principals{"arn:aws:iam::" + acct + ":role/ops/Operator"},
			[]string{"arn:aws:sts::" + acct + ":assumed-role/Operator/alice", "arn:aws:sts::" + acct + ":assumed-role/Operator/i-0abc",
				"arn:aws:iam::" + acct + ":role/ops/Operator"},
			[]string{"arn:aws:sts::" + acct + ":assumed-role/OperatorX/alice", "arn:aws:sts::" + acct + ":assumed-role/CI/alice",
				"arn:aws:sts::" + acct + ":assumed-role/Operator/", "arn:aws:sts::" + acct + ":assumed-role/Operator/a/b",
				"arn:aws:sts::" + other + ":assumed-role/Operator/alice", "arn:aws:iam::" + acct + ":user/Operator",
				"arn:aws:iam::" + acct + ":role/Operator", "arn:aws:iam::" + acct + ":root"}},
		{operator.Principals{"arn:aws:iam::" + acct + ":user/ci/deployer", "arn:aws:iam::" + other + ":role/Ops"},
			[]string{"arn:aws:iam::" + acct + ":user/ci/deployer", "arn:aws:sts::" + other + ":assumed-role/Ops/s"},
			[]string{"arn:aws:iam::" + acct + ":user/deployer", "arn:aws:sts::" + acct + ":assumed-role/deployer/s",
				"arn:aws:sts::" + acct + ":assumed-role/Ops/s", "arn:aws:iam::" + acct + ":root"}},
		{nil, nil, []string{"arn:aws:iam::" + acct + ":root", "arn:aws:iam::" + acct + ":user/operator"}},
	}
	for _, c := range cases {
		for _, caller := range c.admits {
			if !c.listed.Admits(caller) {
				t.Errorf("%v refuses %s", c.listed, caller)
			}
		}
		for _, caller := range c.refuses {
			if c.listed.Admits(caller) {
				t.Errorf("%v admits %s", c.listed, caller)
			}
		}
	}
}

// The operator function refuses, on every request, an event API Gateway authorized with IAM for
// a principal that is not one of its Principals, before any route runs (this operator has no
// table: a route that ran would fail otherwise).
func TestLambdaRefusesOtherPrincipals(t *testing.T) {
	handler := (&operator.Operator{Principals: operator.Principals{"arn:aws:iam::123456789012:role/Operator"}}).Lambda()
	for _, caller := range []string{"arn:aws:sts::123456789012:assumed-role/CI/build-42", "arn:aws:iam::123456789012:user/admin", "arn:aws:iam::123456789012:root"} {
		ev := lambdaevents.APIGatewayV2HTTPRequest{RouteKey: "POST /operator/tenants/{id}/keys", RawPath: "/operator/tenants/ac_x/keys",
			RequestContext: lambdaevents.APIGatewayV2HTTPRequestContext{HTTP: lambdaevents.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/operator/tenants/ac_x/keys"},
				Authorizer: &lambdaevents.APIGatewayV2HTTPRequestContextAuthorizerDescription{IAM: &lambdaevents.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{
					AccessKey: "ASIAEXAMPLE", AccountID: "123456789012", UserARN: caller}}}}
		res, err := handler(t.Context(), ev)
		if err != nil || res.StatusCode != http.StatusForbidden || !strings.Contains(res.Body, operator.ErrNotOperator.Msg) {
			t.Errorf("%s: %v %d %s, want 403 %q", caller, err, res.StatusCode, res.Body, operator.ErrNotOperator.Msg)
		}
	}
}
