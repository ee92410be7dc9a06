package access

import (
	"context"
	"net/netip"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/iprestrict"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// Family codes.
const (
	CodeTextTooLong      = "ERR_NGROK_1421"
	CodeDuplicateCIDR    = "ERR_NGROK_1408"
	CodePolicyNotFound   = "ERR_NGROK_1414"
	CodePolicyReferred   = "ERR_NGROK_1420"
	CodeRuleLimit        = "ERR_NGROK_1411"
	CodeActionNotAllowed = "ERR_NGROK_1422"
)

var textCodes = api.TextCodes{Description: CodeTextTooLong, Metadata: CodeTextTooLong}

// IPPolicyItem is a stored IP policy. Its rules are also indexed on it (normalised CIDR → rule),
// so that adding a rule conditions on the CIDR being new to the policy, deleting the policy
// knows every rule to delete with it, and compiling a restriction needs one read per policy.
type IPPolicyItem struct {
	store.Meta
	resource.Described
	// Rules maps cidrKey(cidr) to "<rule id> <action> <cidr>"; never nil once stored, as
	// DynamoDB cannot set a key inside a map attribute that does not exist.
	Rules map[string]string `dynamodbav:"rules"`
}

// attrRules is the attribute of a policy's rule index.
const attrRules = "rules"

// IPPolicyJSON is the wire form of an IP policy.
type IPPolicyJSON struct {
	resource.Head
}

// MaxRulesPerPolicy bounds a policy's rule index so its item stays far below 400 KB.
const MaxRulesPerPolicy = 2000

// maxCascade is how many rules a policy may have and still be deleted with them in one
// transaction: DynamoDB's 100 writes less the policy, its audit event (2) and the auth guard (2).
const maxCascade = store.MaxTxItems - 5

// IPPoliciesPath is the IP policies' collection path, for references to them.
const IPPoliciesPath = "/ip_policies"

// IPPoliciesDescriptor is the /ip_policies family.
var IPPoliciesDescriptor = &resource.Descriptor{
	Path: IPPoliciesPath, Prefix: ids.IPPolicy, ListKey: "ip_policies", EventKind: "ip_policy", Filter: true,
	Binding: func() resource.Binding { return resource.Bind(newIPPolicies) },
}

// IPPolicies is the IP policy family's rules.
type IPPolicies struct {
	*resource.Family[IPPolicyItem, *IPPolicyItem]
}

func newIPPolicies(f *resource.Family[IPPolicyItem, *IPPolicyItem]) IPPolicies { return IPPolicies{f} }

// Render returns an IP policy as GET returns it.
func (f IPPolicies) Render(r *api.Request, it *IPPolicyItem) any {
	return IPPolicyJSON{resource.NewHead(r, f.Path, &it.Meta, it.Described)}
}

// Create fills a new IP policy, with an empty rule index, from the request body.
func (IPPolicies) Create(ctx context.Context, r *api.Request, it *IPPolicyItem, m *resource.Mutation) (any, error) {
	if err := it.DecodeCreate(r, textCodes, &api.Text{}); err != nil {
		return nil, err
	}
	it.Rules = map[string]string{}
	return nil, nil
}

// Update applies a PATCH body of description and metadata.
func (IPPolicies) Update(ctx context.Context, r *api.Request, it *IPPolicyItem, m *resource.Mutation) error {
	if err := it.UpdateText(r, textCodes); err != nil {
		return err
	}
	if it.Rules == nil {
		it.Rules = map[string]string{}
	}
	return nil
}

// Delete refuses a policy still used, or with more rules than one transaction can delete, and
// deletes its rules with it.
func (IPPolicies) Delete(ctx context.Context, r *api.Request, it *IPPolicyItem, m *resource.Mutation) error {
	// References bump the policy's version, so this read is current at commit or the delete retries.
	if it.Refs > 0 {
		return api.BadRequest(CodePolicyReferred, "id",
			"IP policy %s is used by %d IP restriction(s) or edge module(s); remove it from them before deleting it", it.ID, it.Refs)
	}
	if len(it.Rules) > maxCascade {
		return api.BadRequest(CodeRuleLimit, "id", "IP policy %s has %d rules; a policy is deleted atomically with at most %d rules, so delete %d of its rules first",
			it.ID, len(it.Rules), maxCascade, len(it.Rules)-maxCascade)
	}
	// The policy's delete conditions on the version read, and every rule change bumps it,
	// so exactly the rules indexed here exist when this commits.
	for _, e := range it.Rules {
		ruleID, _, _ := parseEntry(e)
		m.Delete("rule "+ruleID, store.ResourceKey(it.AccountID, ruleID))
	}
	return nil
}

// cidrKey is a normalised CIDR as a map key: the expression builder splits attribute paths on
// dots, so IPv4 dots become underscores.
func cidrKey(p netip.Prefix) string { return strings.ReplaceAll(p.String(), ".", "_") }

func ruleEntry(id, action string, p netip.Prefix) string { return id + " " + action + " " + p.String() }

func parseEntry(e string) (id string, rule iprestrict.Rule, ok bool) {
	parts := strings.Fields(e)
	if len(parts) != 3 {
		return "", iprestrict.Rule{}, false
	}
	p, err := netip.ParsePrefix(parts[2])
	if err != nil {
		return "", iprestrict.Rule{}, false
	}
	return parts[0], iprestrict.Rule{Prefix: p, Deny: parts[1] == ActionDeny}, true
}

// rules returns the policy's rules for compiling.
func (p *IPPolicyItem) rules() []iprestrict.Rule {
	out := make([]iprestrict.Rule, 0, len(p.Rules))
	for _, e := range p.Rules {
		if _, r, ok := parseEntry(e); ok {
			out = append(out, r)
		}
	}
	return out
}

// ruleAt returns the rule id holding cidr key in the policy, if any.
func (p *IPPolicyItem) ruleAt(key string) (string, bool) {
	e, ok := p.Rules[key]
	if !ok {
		return "", false
	}
	id, _, _ := parseEntry(e)
	return id, true
}

// ruleMapPath is the attribute path of one CIDR in a policy's rule index.
func ruleMapPath(key string) expression.NameBuilder {
	return expression.Name(attrRules).AppendName(expression.Name(key))
}

// policyRef is the response form of a reference to an IP policy.
func policyRef(r *api.Request, id string) api.Ref {
	return api.Ref{ID: id, URI: resource.URI(r, IPPoliciesPath, id)}
}

// changeAPIRestriction adds to m the writes that apply change to the account's compiled API
// restriction state, when affected says the current state is concerned, refusing with a 400
// naming field a change that would lock the caller out. The state is the version this request
// was verified against, and the commit's guard conditions on that version, so concurrent
// changes retry instead of racing.
func changeAPIRestriction(ctx context.Context, k *resource.Kit, r *api.Request, m *resource.Mutation, field string,
	affected func(*iprestrict.State) bool, change func(*iprestrict.State)) error {
	acct, err := m.Account()
	if err != nil {
		return err
	}
	x := iprestrict.Accounts{DB: k.DB}
	upd, err := x.Change(ctx, r, m.Tx, r.Caller().AccountID, acct.Restriction, field, affected, change)
	if err != nil || upd == nil {
		return err
	}
	m.UpdateAccount(*upd)
	return nil
}

// always is the affected test of changes that concern the state whatever it holds.
func always(*iprestrict.State) bool { return true }
