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

// RuleItem is a stored IP policy rule.
type RuleItem struct {
	store.Meta
	Description string `dynamodbav:"description"`
	Metadata    string `dynamodbav:"metadata"`
	CIDR        string `dynamodbav:"cidr"`
	Action      string `dynamodbav:"action"`
	PolicyID    string `dynamodbav:"policy"`
}

// RuleJSON is the wire form of an IP policy rule.
type RuleJSON struct {
	ID          string  `json:"id"`
	URI         string  `json:"uri"`
	CreatedAt   string  `json:"created_at"`
	Description string  `json:"description"`
	Metadata    string  `json:"metadata"`
	CIDR        string  `json:"cidr"`
	IPPolicy    api.Ref `json:"ip_policy"`
	Action      string  `json:"action"`
}

type ruleCreate struct {
	Description *string `json:"description"`
	Metadata    *string `json:"metadata"`
	CIDR        *string `json:"cidr"`
	IPPolicyID  *string `json:"ip_policy_id"`
	Action      *string `json:"action"`
}

type ruleUpdate struct {
	Description *string `json:"description"`
	Metadata    *string `json:"metadata"`
	CIDR        *string `json:"cidr"`
	// Action is accepted only to refuse it with a message saying it cannot change.
	Action *string `json:"action"`
}

// labelPolicy labels the write of a rule's policy (its rule index) in a rule mutation.
const labelPolicy = "policy"

// Rules returns the /ip_policy_rules family.
func Rules(k *resource.Kit) *resource.Family[RuleItem, *RuleItem] {
	f := &resource.Family[RuleItem, *RuleItem]{
		Kit: k, Prefix: ids.IPPolicyRule, Path: "/ip_policy_rules", ListKey: "ip_policy_rules", EventKind: "ip_policy_rule", Filter: true,
	}
	f.Render = func(r *api.Request, it *RuleItem) any {
		return RuleJSON{ID: it.ID, URI: f.URI(r, it.ID), CreatedAt: api.Timestamp(it.CreatedAt), Description: it.Description,
			Metadata: it.Metadata, CIDR: it.CIDR, IPPolicy: policyRef(r, it.PolicyID), Action: it.Action}
	}
	f.Create = func(ctx context.Context, r *api.Request, it *RuleItem, m *resource.Mutation) (any, error) {
		var in ruleCreate
		if err := api.Decode(r, &in); err != nil {
			return nil, err
		}
		if err := api.CheckText(textCodes, in.Description, in.Metadata); err != nil {
			return nil, err
		}
		if in.CIDR == nil {
			return nil, api.BadRequest(iprestrict.CodeInvalidCIDR, "cidr", "cidr is required: an IPv4 or IPv6 CIDR such as 192.0.2.0/24")
		}
		prefix, err := iprestrict.ParseCIDR("cidr", *in.CIDR)
		if err != nil {
			return nil, err
		}
		if in.Action == nil || (*in.Action != ActionAllow && *in.Action != ActionDeny) {
			got := "nothing"
			if in.Action != nil {
				got = api.Describe(*in.Action)
			}
			return nil, api.BadRequest(CodeActionNotAllowd, "action", "action must be %q or %q, not %s", ActionAllow, ActionDeny, got)
		}
		if in.IPPolicyID == nil || *in.IPPolicyID == "" {
			return nil, api.BadRequest(CodePolicyNotFound, "ip_policy_id", "ip_policy_id is required: the id of the IP policy (ipp_…) the rule belongs to")
		}
		pid := *in.IPPolicyID
		notFound := api.BadRequest(CodePolicyNotFound, "ip_policy_id", "IP policy %s does not exist in this account", api.Describe(pid))
		if !ids.Is(pid, ids.IPPolicy) {
			return nil, notFound
		}
		pkey := store.ResourceKey(it.AccountID, pid)
		items, err := k.Read(ctx, r, pkey)
		if err != nil {
			return nil, err
		}
		if items[0] == nil {
			return nil, notFound
		}
		var pol PolicyItem
		if err := store.Unmarshal(items[0], &pol); err != nil {
			return nil, err
		}
		key := cidrKey(prefix)
		if other, dup := pol.ruleAt(key); dup {
			return nil, api.BadRequest(CodeDuplicateCIDR, "cidr", "IP policy %s already has a rule for %s (%s)", pid, prefix, other)
		}
		if len(pol.Rules) >= MaxRulesPerPolicy {
			return nil, api.Invalid("ip_policy_id", "IP policy %s already has the maximum of %d rules", pid, MaxRulesPerPolicy)
		}
		api.Set(&it.Description, in.Description)
		api.Set(&it.Metadata, in.Metadata)
		it.CIDR, it.Action, it.PolicyID = prefix.String(), *in.Action, pid
		// The CIDR must still be new to the policy, and the policy must still exist, at commit.
		m.Touch(labelPolicy, pkey, expression.Set(ruleMapPath(key), expression.Value(ruleEntry(it.ID, it.Action, prefix))),
			expression.AttributeNotExists(ruleMapPath(key)))
		rule := iprestrict.Rule{Prefix: prefix, Deny: it.Action == ActionDeny}
		return nil, syncIPX(r, m, "cidr", usesPolicy(pid), func(s *iprestrict.State) { s.SetRule(pid, netip.Prefix{}, rule) })
	}
	f.Update = func(ctx context.Context, r *api.Request, it *RuleItem, m *resource.Mutation) error {
		var in ruleUpdate
		if err := api.Decode(r, &in); err != nil {
			return err
		}
		if in.Action != nil {
			return api.BadRequest(CodeActionNotAllowd, "action", "a rule's action cannot be changed; delete the rule and create one with the other action")
		}
		if in.Description == nil && in.Metadata == nil && in.CIDR == nil {
			return api.EmptyUpdate("description", "metadata", "cidr")
		}
		if err := api.CheckText(textCodes, in.Description, in.Metadata); err != nil {
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
				if err := moveRule(ctx, k, r, m, it, old, prefix); err != nil {
					return err
				}
				it.CIDR = prefix.String()
			}
		}
		api.Set(&it.Description, in.Description)
		api.Set(&it.Metadata, in.Metadata)
		return nil
	}
	f.Delete = func(ctx context.Context, r *api.Request, it *RuleItem, m *resource.Mutation) error {
		prefix, err := netip.ParsePrefix(it.CIDR)
		if err != nil {
			return err
		}
		m.Touch(labelPolicy, store.ResourceKey(it.AccountID, it.PolicyID), expression.Remove(ruleMapPath(cidrKey(prefix))))
		return syncIPX(r, m, "id", usesPolicy(it.PolicyID), func(s *iprestrict.State) { s.RemoveRule(it.PolicyID, prefix) })
	}
	return f
}

// moveRule changes a rule's CIDR in its policy's index (refusing a CIDR the policy already has)
// and in the compiled API restriction state.
func moveRule(ctx context.Context, k *resource.Kit, r *api.Request, m *resource.Mutation, it *RuleItem, old, next netip.Prefix) error {
	pkey := store.ResourceKey(it.AccountID, it.PolicyID)
	var pol PolicyItem
	if err := k.DB.Get(ctx, pkey, &pol); store.IsNotFound(err) {
		// Only a policy delete removes it, and that deletes this rule too.
		return api.ErrNotFound
	} else if err != nil {
		return err
	}
	key := cidrKey(next)
	if other, dup := pol.ruleAt(key); dup {
		return api.BadRequest(CodeDuplicateCIDR, "cidr", "IP policy %s already has a rule for %s (%s)", it.PolicyID, next, other)
	}
	m.Touch(labelPolicy, pkey, expression.Remove(ruleMapPath(cidrKey(old))).
		Set(ruleMapPath(key), expression.Value(ruleEntry(it.ID, it.Action, next))),
		expression.AttributeNotExists(ruleMapPath(key)))
	rule := iprestrict.Rule{Prefix: next, Deny: it.Action == ActionDeny}
	return syncIPX(r, m, "cidr", usesPolicy(it.PolicyID), func(s *iprestrict.State) { s.SetRule(it.PolicyID, old, rule) })
}

func usesPolicy(id string) func(*iprestrict.State) bool {
	return func(s *iprestrict.State) bool { return s.Uses(id) }
}
