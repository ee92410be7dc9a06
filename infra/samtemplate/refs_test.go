package samtemplate_test

import (
	"fmt"
	"strings"
	"testing"

	"tunnelapi/infra/samtemplate"
)

// refProblems finds every Ref, GetAtt, Sub name and condition of the deployed template that
// names nothing: a parameter, a resource, a pseudo parameter (AWS::…) or a condition.
func refProblems(tpl *samtemplate.Template) []string {
	var problems []string
	known := func(n string) bool {
		_, param := tpl.Parameters[n]
		_, res := tpl.Resources[n]
		return param || res || strings.HasPrefix(n, "AWS::")
	}
	condition := func(path string, c any) {
		if _, ok := tpl.Conditions[fmt.Sprint(c)]; !ok {
			problems = append(problems, fmt.Sprintf("%s: unknown condition %v", path, c))
		}
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				switch k {
				case "Ref":
					if !known(fmt.Sprint(x)) {
						problems = append(problems, fmt.Sprintf("%s: Ref to unknown %v", path, x))
					}
				case "Fn::GetAtt":
					if n := getAttOf(v); n == "" || tpl.Resources[n].Type == "" {
						problems = append(problems, fmt.Sprintf("%s: GetAtt of unknown %v", path, x))
					}
				case "Fn::Sub":
					s, vars := x, map[string]any{}
					if l, ok := x.([]any); ok && len(l) == 2 {
						s = l[0]
						vars, _ = l[1].(map[string]any)
					}
					for _, n := range subNames(fmt.Sprint(s)) {
						if _, local := vars[n]; !local && !known(n) {
							problems = append(problems, fmt.Sprintf("%s: Sub names unknown %q", path, n))
						}
					}
				case "Fn::If":
					if l, ok := x.([]any); ok && len(l) == 3 {
						condition(path, l[0])
					}
				case "Condition":
					if s, ok := x.(string); ok {
						condition(path, s)
					}
				}
				walk(path+"."+k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), x)
			}
		}
	}
	for name, r := range tpl.Resources {
		if r.Condition != "" {
			condition("Resources."+name, r.Condition)
		}
		walk("Resources."+name, r.Properties)
	}
	walk("Conditions", tpl.Conditions)
	walk("Outputs", tpl.Outputs)
	return problems
}

// Every reference of the deployed template resolves: CloudFormation refuses one that does not,
// after the upload, and SAM generates names (a function's Role, its stage) that only the
// transformed template shows.
func TestReferencesResolve(t *testing.T) {
	for _, p := range refProblems(deployed(t)) {
		t.Error(p)
	}
}
