package samtemplate_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"tunnelapi/infra/samtemplate"
	"tunnelapi/shared/app"
)

// principalProblems holds the template, as deployed, to who may reach what: the operator
// function gets OPERATOR_PRINCIPALS from the OperatorPrincipals parameter (a string, empty by
// default) or, when it is empty, the deploying account's root; the usage worker gets the
// account and the stack its log groups must belong to, and CloudWatch Logs may invoke it only
// for the stack's own log groups.
func principalProblems(tpl *samtemplate.Template) []string {
	var problems []string
	param, _ := tpl.Parameters["OperatorPrincipals"].(map[string]any)
	if param == nil || param["Type"] != "String" || param["Default"] != "" {
		problems = append(problems, fmt.Sprintf("parameter OperatorPrincipals is %v, want a String defaulting to \"\"", param))
	}
	cond := map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{map[string]any{"Ref": "OperatorPrincipals"}, ""}}}}
	if name := "HasOperatorPrincipals"; !reflect.DeepEqual(tpl.Conditions[name], cond) {
		problems = append(problems, fmt.Sprintf("condition %s is %v, want OperatorPrincipals not empty", name, tpl.Conditions[name]))
	}
	env := func(fn string) map[string]any {
		v, _ := dig(tpl.Resources[fn].Properties, "Environment", "Variables").(map[string]any)
		return v
	}
	want := map[string]any{"Fn::If": []any{"HasOperatorPrincipals", map[string]any{"Ref": "OperatorPrincipals"},
		map[string]any{"Fn::Sub": "arn:${AWS::Partition}:iam::${AWS::AccountId}:root"}}}
	if got := env(app.Operator.Name)["OPERATOR_PRINCIPALS"]; !reflect.DeepEqual(got, want) {
		problems = append(problems, fmt.Sprintf("%s's OPERATOR_PRINCIPALS is %v, want OperatorPrincipals or the account's root", app.Operator.Name, got))
	}
	for _, w := range app.Workers {
		if w.Trigger != "Logs" {
			continue
		}
		for name, ref := range map[string]string{"DEPLOYMENT_ACCOUNT_ID": "AWS::AccountId", "STACK_NAME": "AWS::StackName"} {
			if got := env(w.Name)[name]; !reflect.DeepEqual(got, map[string]any{"Ref": ref}) {
				problems = append(problems, fmt.Sprintf("%s's %s is %v, want the Ref of %s", w.Name, name, got, ref))
			}
		}
		for pname, r := range tpl.Resources {
			if r.Type != "AWS::Lambda::Permission" || getAttOf(r.Properties["FunctionName"]) != w.Name || r.Properties["Principal"] != "logs.amazonaws.com" {
				continue
			}
			src, _ := dig(r.Properties, "SourceArn", "Fn::Sub").(string)
			if !strings.HasSuffix(src, ":log-group:${AWS::StackName}-*") {
				problems = append(problems, fmt.Sprintf("%s lets CloudWatch Logs invoke %s for %q, not only the stack's log groups", pname, w.Name, src))
			}
		}
	}
	return problems
}

// Who may reach the operator and the usage worker is wired as their code reads it.
func TestPrincipalsAreWired(t *testing.T) {
	for _, p := range principalProblems(deployed(t)) {
		t.Error(p)
	}
}
