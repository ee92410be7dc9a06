package trafficpolicy

import (
	"context"
	"fmt"
	"testing"

	"tunnelapi/shared/platform/api"
)

// secrets.get has the reference's one signature, secrets.get(vault_name string, secret_name
// string) -> string: a call with two strings is accepted wherever an expression or an
// interpolation may be, and a call of another arity, with an argument that is not a string, or
// whose result is used as anything but a string is refused with a 400 naming traffic_policy.
// (An argument of a variable whose type the reference leaves open, dyn, compiles as CEL's
// gradual typing has it, and is checked when the policy runs.)
func TestSecretsGet(t *testing.T) {
	condition := func(expr string) string {
		return fmt.Sprintf("on_http_request:\n  - expressions: [%q]\n    actions: [{type: deny}]\n", expr)
	}
	header := func(expr string) string {
		return fmt.Sprintf("on_http_request:\n  - actions:\n      - type: add-headers\n        config: {headers: {authorization: %q}}\n", "Bearer ${"+expr+"}")
	}
	for name, doc := range map[string]string{
		"compared as a string":          condition("secrets.get('vault', 'token') == req.headers['x-token'][0]"),
		"with string methods":           condition("secrets.get('vault', 'token').startsWith('sk_')"),
		"names from string expressions": condition("secrets.get(req.host, 'token' + req.method) != ''"),
		"interpolated in a header":      header("secrets.get('vault', 'token')"),
		"in the tcp phase": "on_tcp_connect:\n  - expressions: [\"secrets.get('vault', 'allowed') == conn.client_ip\"]\n" +
			"    actions: [{type: deny}]\n",
	} {
		if err := Validate(context.Background(), "traffic_policy", doc); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, doc := range map[string]string{
		"one argument":                   condition("secrets.get('token') == 'x'"),
		"three arguments":                condition("secrets.get('vault', 'token', 'v2') == 'x'"),
		"no argument":                    condition("secrets.get() == 'x'"),
		"a number for the vault":         condition("secrets.get(1, 'token') == 'x'"),
		"a list for the secret":          condition("secrets.get('vault', ['token']) == 'x'"),
		"a bool for the secret":          condition("secrets.get('vault', true) == 'x'"),
		"a duration for the secret":      condition("secrets.get('vault', duration('1s')) == 'x'"),
		"compared with a number":         condition("secrets.get('vault', 'limit') > 3"),
		"added to a number":              condition("secrets.get('vault', 'limit') + 1 == 2"),
		"as a condition":                 condition("secrets.get('vault', 'enabled')"),
		"indexed":                        condition("secrets.get('vault', 'token')[0] == 's'"),
		"as a receiver":                  condition("'vault'.get('token') == 'x'"),
		"interpolated, one argument":     header("secrets.get('token')"),
		"interpolated, used as a number": header("string(secrets.get('vault', 'n') * 2)"),
	} {
		err := Validate(context.Background(), "traffic_policy", doc)
		if e, ok := api.AsError(err); !ok || e.Status != 400 || e.Field != "traffic_policy" {
			t.Errorf("%s: %v, want a 400 naming traffic_policy", name, err)
		}
	}
}
