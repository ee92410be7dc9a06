package access

import (
	"context"
	"net/netip"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/iprestrict"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// Rule actions.
const (
	ActionAllow = "allow"
	ActionDeny  = "deny"
)

// IPPolicyRuleItem is a stored IP policy rule.
type IPPolicyRuleItem struct {
	store.Meta
	resource.Described
	CIDR     string `dynamodbav:"cidr"`
	Action   string `dynamodbav:"action"`
	PolicyID string `dynamodbav:"policy"`
}

// IPPolicyRuleJSON is the wire form of an IP policy rule.
type IPPolicyRuleJSON struct {
	resource.Head
	CIDR     string  `json:"cidr"`
	IPPolicy api.Ref `json:"ip_policy"`
	Action   string  `json:"action"`
}

// ruleUpdate is a PATCH body; Action is accepted only to refuse it with a message saying it
// cannot change.
type ruleUpdate struct {
	api.Text
	CIDR   *string `json:"cidr"`
	Action *string `json:"action" patch:"refused"`
}

// ruleCreate is a POST body: what an update may send, and the policy the rule belongs to.
type ruleCreate struct {
	ruleUpdate
	IPPolicyID *string `json:"ip_policy_id"`
}

// labelPolicy labels the write of a rule's policy (its rule index) in a rule mutation.
const labelPolicy = "policy"

// IPPolicyRulesDescriptor is the /ip_policy_rules family.
var IPPolicyRulesDescriptor = &resource.Descriptor{
	Path: "/ip_policy_rules", Prefix: ids.IPPolicyRule, ListKey: "ip_policy_rules", EventKind: "ip_policy_rule", Filter: true,
	Binding: func() resource.Binding { return resource.Bind(newIPPolicyRules) },
}

// IPPolicyRules is the IP policy rule family's rules. A rule is also indexed on its policy (see
// IPPolicyItem), and a rule of a policy an api restriction uses changes the compiled state.
type IPPolicyRules struct {
	*resource.Family[IPPolicyRuleItem, *IPPolicyRuleItem]
}

func newIPPolicyRules(f *resource.Family[IPPolicyRuleItem, *IPPolicyRuleItem]) IPPolicyRules {
	return IPPolicyRules{f}
}

// Render returns a rule as GET returns it.
func (f IPPolicyRules) Render(r *api.Request, it *IPPolicyRuleItem) any {
	return IPPolicyRuleJSON{Head: resource.NewHead(r, f.Path, &it.Meta, it.Described), CIDR: it.CIDR, IPPolicy: policyRef(r, it.PolicyID), Action: it.Action}
}

// Create fills a new rule from the request body and adds it to its policy's index, refusing a
// CIDR the policy already has.
func (f IPPolicyRules) Create(ctx context.Context, r *api.Request, it *IPPolicyRuleItem, m *resource.Mutation) (any, error) {
	var in ruleCreate
	if err := it.DecodeCreate(r, textCodes, &in); err != nil {
		return nil, err
	}
	prefix, err := parseRuleCIDR(in.CIDR)
	if err != nil {
		return nil, err
	}
	if err := checkAction(in.Action); err != nil {
		return nil, err
	}
	policyID, err := checkPolicyID(in.IPPolicyID)
	if err != nil {
		return nil, err
	}
	key := cidrKey(prefix)
	it.CIDR, it.Action, it.PolicyID = prefix.String(), *in.Action, policyID
	// The policy is not read first: its index decides at commit that it exists (in this
	// account: the key is the account's), that the CIDR is new to it and that it has room, and
	// the policy as it was when that failed says which of them did not hold.
	m.Touch(labelPolicy, store.ResourceKey(it.AccountID, policyID), expression.Set(ruleMapPath(key), expression.Value(ruleEntry(it.ID, it.Action, prefix))),
		expression.AttributeNotExists(ruleMapPath(key)),
		expression.Name(attrRules).Size().LessThan(expression.Value(MaxRulesPerPolicy)))
	m.RefuseWith(labelPolicy, func(old store.Item) error {
		if old == nil {
			return errPolicyNotFound(policyID)
		}
		var pol IPPolicyItem
		if store.Unmarshal(old, &pol) != nil {
			return nil
		}
		if other, dup := pol.ruleAt(key); dup {
			return api.BadRequest(CodeDuplicateCIDR, "cidr", "IP policy %s already has a rule for %s (%s)", pol.ID, prefix, other)
		}
		if len(pol.Rules) >= MaxRulesPerPolicy {
			return api.BadRequest(CodeRuleLimit, "ip_policy_id", "IP policy %s already has the maximum of %d rules", pol.ID, MaxRulesPerPolicy)
		}
		return nil
	})
	rule := iprestrict.Rule{Prefix: prefix, Deny: it.Action == ActionDeny}
	return nil, changeAPIRestriction(ctx, f.Kit, r, m, "cidr", usesPolicy(policyID),
		func(s *iprestrict.State) { s.SetRule(policyID, netip.Prefix{}, rule) })
}

// parseRuleCIDR checks a create body's cidr.
func parseRuleCIDR(cidr *string) (netip.Prefix, error) {
	if cidr == nil {
		return netip.Prefix{}, api.BadRequest(iprestrict.CodeInvalidCIDR, "cidr", "cidr is required: an IPv4 or IPv6 CIDR such as 192.0.2.0/24")
	}
	return iprestrict.ParseCIDR("cidr", *cidr)
}

// checkAction checks a create body's action.
func checkAction(action *string) error {
	if action != nil && (*action == ActionAllow || *action == ActionDeny) {
		return nil
	}
	got := "nothing"
	if action != nil {
		got = api.Describe(*action)
	}
	return api.BadRequest(CodeActionNotAllowed, "action", "action must be %q or %q, not %s", ActionAllow, ActionDeny, got)
}

// checkPolicyID checks a create body's ip_policy_id: a missing or malformed id is 400
// ERR_NGROK_1414 at once, as a policy the account does not have is at commit.
func checkPolicyID(id *string) (string, error) {
	if id == nil || *id == "" {
		return "", api.BadRequest(CodePolicyNotFound, "ip_policy_id", "ip_policy_id is required: the id of the IP policy (ipp_…) the rule belongs to")
	}
	if !ids.Is(*id, ids.IPPolicy) {
		return "", errPolicyNotFound(*id)
	}
	return *id, nil
}

// errPolicyNotFound is the 400 for a rule naming policy id, which the account does not have.
func errPolicyNotFound(id string) error {
	return api.BadRequest(CodePolicyNotFound, "ip_policy_id", "IP policy %s does not exist in this account", api.Describe(id))
}

// Update applies a PATCH body; a changed CIDR moves the rule in its policy's index.
func (f IPPolicyRules) Update(ctx context.Context, r *api.Request, it *IPPolicyRuleItem, m *resource.Mutation) error {
	var in ruleUpdate
	if err := textCodes.DecodePatch(r, &in); err != nil {
		return err
	}
	if in.Action != nil {
		return api.BadRequest(CodeActionNotAllowed, "action", "a rule's action cannot be changed; delete the rule and create one with the other action")
	}
	if err := api.CheckText(textCodes, in.Text); err != nil {
		return err
	}
	if in.CIDR != nil {
		prefix, err := iprestrict.ParseCIDR("cidr", *in.CIDR)
		if err != nil {
			return err
		}
		old, err := netip.ParsePrefix(it.CIDR)
		if err != nil {
			return err
		}
		if prefix != old {
			if err := f.move(ctx, r, m, it, old, prefix); err != nil {
				return err
			}
			it.CIDR = prefix.String()
		}
	}
	return it.SetText(textCodes, in.Text)
}

// Delete removes the rule from its policy's index and from the compiled state.
func (f IPPolicyRules) Delete(ctx context.Context, r *api.Request, it *IPPolicyRuleItem, m *resource.Mutation) error {
	prefix, err := netip.ParsePrefix(it.CIDR)
	if err != nil {
		return err
	}
	m.Touch(labelPolicy, store.ResourceKey(it.AccountID, it.PolicyID), expression.Remove(ruleMapPath(cidrKey(prefix))))
	return changeAPIRestriction(ctx, f.Kit, r, m, "id", usesPolicy(it.PolicyID),
		func(s *iprestrict.State) { s.RemoveRule(it.PolicyID, prefix) })
}

// move changes a rule's CIDR in its policy's index (refusing a CIDR the policy already has)
// and in the compiled API restriction state. The index decides at commit, without reading the
// policy first: the policy exists while its rule does (deleting a policy deletes its rules in
// the same transaction, which fails this one's version check on the rule, so it is read again
// and is a 404), and a CIDR it already has fails the index's condition alone: the 400.
func (f IPPolicyRules) move(ctx context.Context, r *api.Request, m *resource.Mutation, it *IPPolicyRuleItem, old, next netip.Prefix) error {
	key := cidrKey(next)
	m.Touch(labelPolicy, store.ResourceKey(it.AccountID, it.PolicyID), expression.Remove(ruleMapPath(cidrKey(old))).
		Set(ruleMapPath(key), expression.Value(ruleEntry(it.ID, it.Action, next))),
		expression.AttributeNotExists(ruleMapPath(key)))
	m.Refuse(labelPolicy, api.BadRequest(CodeDuplicateCIDR, "cidr", "IP policy %s already has a rule for %s", it.PolicyID, next))
	rule := iprestrict.Rule{Prefix: next, Deny: it.Action == ActionDeny}
	return changeAPIRestriction(ctx, f.Kit, r, m, "cidr", usesPolicy(it.PolicyID),
		func(s *iprestrict.State) { s.SetRule(it.PolicyID, old, rule) })
}

// usesPolicy is the affected test of changes to policy id's rules.
func usesPolicy(id string) func(*iprestrict.State) bool {
	return func(s *iprestrict.State) bool { return s.Uses(id) }
}
