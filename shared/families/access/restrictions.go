package access

import (
	"context"
	"slices"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/iprestrict"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// Restriction types.
const (
	TypeDashboard = "dashboard"
	TypeAPI       = "api"
	TypeAgent     = "agent"
	TypeEndpoints = "endpoints"
)

var restrictionTypes = []string{TypeDashboard, TypeAPI, TypeAgent, TypeEndpoints}

// MaxPoliciesPerRestriction bounds ip_policy_ids so that reading them with the auth items stays
// one TransactGetItems call.
const MaxPoliciesPerRestriction = 50

// RestrictionItem is a stored IP restriction.
type RestrictionItem struct {
	store.Meta
	Description string   `dynamodbav:"description"`
	Metadata    string   `dynamodbav:"metadata"`
	Enforced    bool     `dynamodbav:"enforced"`
	Type        string   `dynamodbav:"type"`
	PolicyIDs   []string `dynamodbav:"policies"`
}

// RestrictionJSON is the wire form of an IP restriction.
type RestrictionJSON struct {
	ID          string    `json:"id"`
	URI         string    `json:"uri"`
	CreatedAt   string    `json:"created_at"`
	Description string    `json:"description"`
	Metadata    string    `json:"metadata"`
	Enforced    bool      `json:"enforced"`
	Type        string    `json:"type"`
	IPPolicies  []api.Ref `json:"ip_policies"`
}

type restrictionCreate struct {
	Description *string   `json:"description"`
	Metadata    *string   `json:"metadata"`
	Enforced    *bool     `json:"enforced"`
	Type        *string   `json:"type"`
	IPPolicyIDs *[]string `json:"ip_policy_ids"`
}

type restrictionUpdate struct {
	Description *string   `json:"description"`
	Metadata    *string   `json:"metadata"`
	Enforced    *bool     `json:"enforced"`
	IPPolicyIDs *[]string `json:"ip_policy_ids"`
}

// Restrictions returns the /ip_restrictions family.
func Restrictions(k *resource.Kit) *resource.Family[RestrictionItem, *RestrictionItem] {
	f := &resource.Family[RestrictionItem, *RestrictionItem]{
		Kit: k, Prefix: ids.IPRestriction, Path: "/ip_restrictions", ListKey: "ip_restrictions", EventKind: "ip_restriction", Filter: true,
	}
	f.Render = func(r *api.Request, it *RestrictionItem) any {
		refs := make([]api.Ref, 0, len(it.PolicyIDs))
		for _, p := range it.PolicyIDs {
			refs = append(refs, policyRef(r, p))
		}
		return RestrictionJSON{ID: it.ID, URI: f.URI(r, it.ID), CreatedAt: api.Timestamp(it.CreatedAt), Description: it.Description,
			Metadata: it.Metadata, Enforced: it.Enforced, Type: it.Type, IPPolicies: refs}
	}
	f.Create = func(ctx context.Context, r *api.Request, it *RestrictionItem, m *resource.Mutation) (any, error) {
		var in restrictionCreate
		if err := api.Decode(r, &in); err != nil {
			return nil, err
		}
		if err := api.CheckText(textCodes, in.Description, in.Metadata); err != nil {
			return nil, err
		}
		if in.Type == nil || !slices.Contains(restrictionTypes, *in.Type) {
			got := "nothing"
			if in.Type != nil {
				got = api.Describe(*in.Type)
			}
			return nil, api.Invalid("type", "type must be one of dashboard, api, agent or endpoints, not %s", got)
		}
		if in.IPPolicyIDs == nil {
			return nil, api.Invalid("ip_policy_ids", "ip_policy_ids is required: at least one IP policy id (ipp_…)")
		}
		pids, err := checkPolicyIDs(*in.IPPolicyIDs)
		if err != nil {
			return nil, err
		}
		// One round trip reads the policies with the items that verify the caller.
		keys := make([]store.Key, len(pids))
		for i, p := range pids {
			keys[i] = store.ResourceKey(it.AccountID, p)
		}
		items, err := k.Read(ctx, r, keys...)
		if err != nil {
			return nil, err
		}
		pols, err := policiesOf(pids, items)
		if err != nil {
			return nil, err
		}
		api.Set(&it.Description, in.Description)
		api.Set(&it.Metadata, in.Metadata)
		api.Set(&it.Enforced, in.Enforced)
		it.Type, it.PolicyIDs = *in.Type, pids
		for _, p := range pols {
			reference(m, it, p, 1)
		}
		return nil, syncRestriction(r, m, it, pols, false)
	}
	f.Update = func(ctx context.Context, r *api.Request, it *RestrictionItem, m *resource.Mutation) error {
		var in restrictionUpdate
		if err := api.Decode(r, &in); err != nil {
			return err
		}
		if in.Description == nil && in.Metadata == nil && in.Enforced == nil && in.IPPolicyIDs == nil {
			return api.EmptyUpdate("description", "metadata", "enforced", "ip_policy_ids")
		}
		if err := api.CheckText(textCodes, in.Description, in.Metadata); err != nil {
			return err
		}
		var added []*PolicyItem
		changed := in.Enforced != nil && *in.Enforced != it.Enforced
		if in.IPPolicyIDs != nil {
			pids, err := checkPolicyIDs(*in.IPPolicyIDs)
			if err != nil {
				return err
			}
			var newIDs []string
			var keys []store.Key
			for _, p := range pids {
				if !slices.Contains(it.PolicyIDs, p) {
					newIDs = append(newIDs, p)
					keys = append(keys, store.ResourceKey(it.AccountID, p))
				}
			}
			if len(keys) > 0 {
				items, err := k.DB.GetMany(ctx, keys...)
				if err != nil {
					return err
				}
				if added, err = policiesOf(newIDs, items); err != nil {
					return err
				}
			}
			for _, p := range added {
				reference(m, it, p, 1)
			}
			for _, p := range it.PolicyIDs {
				if !slices.Contains(pids, p) {
					m.Reference(p, -1, nil)
				}
			}
			changed = changed || !slices.Equal(pids, it.PolicyIDs)
			it.PolicyIDs = pids
		}
		api.Set(&it.Description, in.Description)
		api.Set(&it.Metadata, in.Metadata)
		api.Set(&it.Enforced, in.Enforced)
		if !changed {
			return nil
		}
		return syncRestriction(r, m, it, added, in.IPPolicyIDs == nil)
	}
	f.Delete = func(ctx context.Context, r *api.Request, it *RestrictionItem, m *resource.Mutation) error {
		for _, p := range it.PolicyIDs {
			m.Reference(p, -1, nil)
		}
		if it.Type != TypeAPI {
			return nil
		}
		return syncIPX(r, m, "id", func(*iprestrict.State) bool { return true },
			func(s *iprestrict.State) { s.RemoveRestriction(it.ID) })
	}
	return f
}

// reference counts restriction it as a referrer of policy p. For an `api` restriction the
// policy's rules are compiled from this read, so its version must not have moved at commit.
func reference(m *resource.Mutation, it *RestrictionItem, p *PolicyItem, delta int64) {
	if it.Type == TypeAPI {
		m.Reference(p.ID, delta, nil, store.AtVersion(p.Version))
		return
	}
	m.Reference(p.ID, delta, nil)
}

// syncRestriction puts an `api` restriction into the compiled state; read holds the policies
// whose rules the state may not have yet.
func syncRestriction(r *api.Request, m *resource.Mutation, it *RestrictionItem, read []*PolicyItem, onlyEnforced bool) error {
	if it.Type != TypeAPI {
		return nil
	}
	rules := map[string][]iprestrict.Rule{}
	for _, p := range read {
		rules[p.ID] = p.rules()
	}
	field := "ip_policy_ids"
	if onlyEnforced {
		field = "enforced"
	}
	return syncIPX(r, m, field, func(*iprestrict.State) bool { return true }, func(s *iprestrict.State) {
		s.PutRestriction(iprestrict.Restriction{ID: it.ID, Enforced: it.Enforced, PolicyIDs: it.PolicyIDs}, rules)
	})
}

// checkPolicyIDs validates a supplied ip_policy_ids list and removes repeats, keeping order.
// The list as sent may hold at most MaxPoliciesPerRestriction ids, repeats included: that is
// checked before anything else, so refusing a huge list costs nothing, and the rest is one pass
// with a set.
func checkPolicyIDs(in []string) ([]string, error) {
	if len(in) > MaxPoliciesPerRestriction {
		return nil, api.Invalid("ip_policy_ids", "ip_policy_ids lists %d ids; the limit is %d", len(in), MaxPoliciesPerRestriction)
	}
	out := make([]string, 0, len(in))
	seen := make(map[string]bool, len(in))
	for i, p := range in {
		if !ids.Is(p, ids.IPPolicy) {
			return nil, api.Invalid("ip_policy_ids", "ip_policy_ids[%d] %s is not an IP policy id (ipp_…)", i, api.Describe(p))
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, api.Invalid("ip_policy_ids", "ip_policy_ids must list at least one IP policy")
	}
	return out, nil
}

// policiesOf decodes the policies read for ids; a missing one is a 400 naming it.
func policiesOf(pids []string, items []store.Item) ([]*PolicyItem, error) {
	out := make([]*PolicyItem, len(pids))
	for i, it := range items {
		if it == nil {
			return nil, api.Invalid("ip_policy_ids", "IP policy %s does not exist in this account", pids[i])
		}
		out[i] = &PolicyItem{}
		if err := store.Unmarshal(it, out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RegisterIPPolicies adds the /ip_policies routes.
func RegisterIPPolicies(k *resource.Kit, mux api.Mux, s *api.Server) { Policies(k).Register(mux, s) }

// RegisterIPPolicyRules adds the /ip_policy_rules routes.
func RegisterIPPolicyRules(k *resource.Kit, mux api.Mux, s *api.Server) { Rules(k).Register(mux, s) }

// RegisterIPRestrictions adds the /ip_restrictions routes.
func RegisterIPRestrictions(k *resource.Kit, mux api.Mux, s *api.Server) {
	Restrictions(k).Register(mux, s)
}
