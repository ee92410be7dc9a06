package operator

import (
	"strings"

	"tunnelapi/shared/platform/api"
)

// Principals are the IAM principals the operator's routes admit (OPERATOR_PRINCIPALS, the
// template's OperatorPrincipals), each the ARN of an account's root, an IAM user or an IAM
// role. API Gateway's IAM authorization admits any principal of the account that a policy
// allows execute-api:Invoke; the function then admits a caller only when one of them names it
// (Admits).
type Principals []string

// ErrNotOperator is the 403 for a request signed by an IAM principal that is not one of the
// operator's (Principals).
var ErrNotOperator = api.Forbidden(api.CodeUnknownKey,
	"this IAM principal is not one of the operator's (the stack's OperatorPrincipals parameter)")

// Admits reports whether caller, the ARN API Gateway's IAM authorizer reports for a request
// (its userArn), is one of p:
//
//   - arn:<partition>:iam::<account>:root admits every principal of that account in that
//     partition: its root user, its IAM users, its roles' sessions, its federated users (as a
//     resource policy naming an account's root trusts the account to decide);
//   - arn:<partition>:iam::<account>:user/<path>/<name> admits that user's ARN only;
//   - arn:<partition>:iam::<account>:role/<path>/<name> admits every session of the role, whose
//     ARN is arn:<partition>:sts::<account>:assumed-role/<name>/<session> (without the role's
//     path: a role's name is unique in its account), and the role's own ARN.
//
// Nothing else admits anything: an ARN of another account, partition or kind, a caller that
// is not an ARN.
func (p Principals) Admits(caller string) bool {
	c, ok := parseARN(caller)
	if !ok {
		return false
	}
	for _, allowed := range p {
		a, ok := parseARN(allowed)
		if !ok || a.service != "iam" || a.partition != c.partition || a.account != c.account {
			continue
		}
		kind, name, _ := strings.Cut(a.resource, "/")
		switch {
		case a.resource == "root":
			return true
		case caller == allowed && (kind == "user" || kind == "role"):
			return true
		case kind == "role" && c.service == "sts":
			roleName := name[strings.LastIndex(name, "/")+1:]
			if session, ok := strings.CutPrefix(c.resource, "assumed-role/"+roleName+"/"); ok && session != "" && !strings.Contains(session, "/") {
				return true
			}
		}
	}
	return false
}

// arn is the parts of an IAM or STS principal's ARN.
type arn struct{ partition, service, account, resource string }

// parseARN splits an ARN of an IAM or STS principal (no region); ok is false for anything else.
func parseARN(s string) (arn, bool) {
	f := strings.SplitN(s, ":", 6)
	if len(f) != 6 || f[0] != "arn" || f[1] == "" || (f[2] != "iam" && f[2] != "sts") || f[3] != "" ||
		len(f[4]) != 12 || strings.Trim(f[4], "0123456789") != "" || f[5] == "" {
		return arn{}, false
	}
	return arn{partition: f[1], service: f[2], account: f[4], resource: f[5]}, true
}
