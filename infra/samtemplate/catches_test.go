package samtemplate_test

import (
	"strings"
	"testing"

	"tunnelapi/infra/samtemplate"
)

// Each check finds the fault it exists for in an otherwise sound deployed template: a route
// removed, a wildcard DynamoDB grant, a KMS action a descriptor declares missing, a queue whose
// visibility timeout is too short, the usage worker's on-failure destination or its alarm
// missing, the operator's principals not passed, the usage worker invocable for any log group,
// a reference to nothing.
func TestChecksCatchWhatTheyAreFor(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*testing.T, *samtemplate.Template)
		check  func(*testing.T, *samtemplate.Template) []string
		want   string
	}{
		{"route removed", func(t *testing.T, tpl *samtemplate.Template) {
			paths := dig(tpl.Resources["HttpApi"].Properties, "Body", "paths").(map[string]any)
			delete(paths["/ip_policies/{id}"].(map[string]any), "delete")
		}, wrap(routeProblems), "DELETE /ip_policies/{id}, served by IPPoliciesFunction, is not a route of the HTTP API"},
		{"wildcard grant", func(t *testing.T, tpl *samtemplate.Template) {
			role := getAttOf(tpl.Resources["ApiKeysFunction"].Properties["Role"])
			st := dig(tpl.Resources[role].Properties, "Policies", 0, "PolicyDocument", "Statement", 0).(map[string]any)
			st["Action"] = append(st["Action"].([]any), "dynamodb:*")
		}, iamProblems, "ApiKeysFunction is granted dynamodb:*"},
		{"KMS action missing", func(t *testing.T, tpl *samtemplate.Template) {
			role := getAttOf(tpl.Resources["ApiKeysFunction"].Properties["Role"])
			st := dig(tpl.Resources[role].Properties, "Policies", 0, "PolicyDocument", "Statement", 1).(map[string]any)
			st["Action"] = []any{"kms:GenerateDataKey"}
		}, iamProblems, "ApiKeysFunction is granted [kms:GenerateDataKey]; its descriptors' Seals and Opens need [kms:Decrypt kms:GenerateDataKey]"},
		{"short visibility timeout", func(t *testing.T, tpl *samtemplate.Template) {
			tpl.Resources["EventsQueue"].Properties["VisibilityTimeout"] = 60.0
		}, wrap(triggerProblems), "queue EventsQueue's visibility timeout 60s is under 6 × the function's timeout"},
		{"no on-failure destination", func(t *testing.T, tpl *samtemplate.Template) {
			delete(tpl.Resources, "UsageWorkerFunctionInvokeConfig")
		}, wrap(triggerProblems), "UsageWorkerFunction has no on-failure destination queue"},
		{"on-failure destination without an alarm", func(t *testing.T, tpl *samtemplate.Template) {
			delete(tpl.Resources, "UsageDeadLetterQueueDepthAlarm")
		}, wrap(triggerProblems), "on-failure destination UsageDeadLetterQueue has no alarm on its depth"},
		{"operator principals not passed", func(t *testing.T, tpl *samtemplate.Template) {
			delete(dig(tpl.Resources["OperatorFunction"].Properties, "Environment", "Variables").(map[string]any), "OPERATOR_PRINCIPALS")
		}, wrap(principalProblems), "OperatorFunction's OPERATOR_PRINCIPALS is <nil>"},
		{"usage worker invoked for any log group", func(t *testing.T, tpl *samtemplate.Template) {
			tpl.Resources["UsageWorkerFunctionLogsPermission"].Properties["SourceArn"] = map[string]any{"Fn::Sub": "arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:*"}
		}, wrap(principalProblems), "not only the stack's log groups"},
		{"dangling reference", func(t *testing.T, tpl *samtemplate.Template) {
			tpl.Resources["Table"].Properties["TableName"] = map[string]any{"Ref": "NoSuchThing"}
		}, wrap(refProblems), "Ref to unknown NoSuchThing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tpl := deployed(t)
			if p := c.check(t, tpl); len(p) > 0 {
				t.Fatalf("the sound template already fails: %v", p)
			}
			c.mutate(t, tpl)
			problems := c.check(t, tpl)
			found := false
			for _, p := range problems {
				found = found || strings.Contains(p, c.want)
			}
			if !found {
				t.Errorf("problems %q, want one containing %q", problems, c.want)
			}
		})
	}
}

// wrap gives a check that needs no *testing.T the signature of one that does.
func wrap(check func(*samtemplate.Template) []string) func(*testing.T, *samtemplate.Template) []string {
	return func(_ *testing.T, tpl *samtemplate.Template) []string { return check(tpl) }
}
