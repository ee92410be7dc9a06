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
// one BatchGetItem call.
const MaxPoliciesPerRestriction = 50

// IPRestrictionItem is a stored IP restriction.
type IPRestrictionItem struct {
	store.Meta
	resource.Described
	Enforced  bool     `dynamodbav:"enforced"`
	Type      string   `dynamodbav:"type"`
	PolicyIDs []string `dynamodbav:"policies"`
}

// IPRestrictionJSON is the wire form of an IP restriction.
type IPRestrictionJSON struct {
	resource.Head
	Enforced   bool      `json:"enforced"`
	Type       string    `json:"type"`
	IPPolicies []api.Ref `json:"ip_policies"`
}

type restrictionUpdate struct {
	api.Text
	Enforced    *bool     `json:"enforced"`
	IPPolicyIDs *[]string `json:"ip_policy_ids"`
}

// restrictionCreate is a POST body: what an update may send, and the type, which cannot change.
type restrictionCreate struct {
	restrictionUpdate
	Type *string `json:"type"`
}

// IPRestrictionsDescriptor is the /ip_restrictions family.
var IPRestrictionsDescriptor = &resource.Descriptor{
	Path: "/ip_restrictions", Prefix: ids.IPRestriction, ListKey: "ip_restrictions", EventKind: "ip_restriction", Filter: true,
	Binding: func() resource.Binding { return resource.Bind(newIPRestrictions) },
}

// IPRestrictions is the IP restriction family's rules. A restriction references each of its
// policies (Mutation.Reference), and one of type api changes the compiled state.
type IPRestrictions struct {
	*resource.Family[IPRestrictionItem, *IPRestrictionItem]
}

func newIPRestrictions(f *resource.Family[IPRestrictionItem, *IPRestrictionItem]) IPRestrictions {
	return IPRestrictions{f}
}

// Render returns a restriction as GET returns it.
func (f IPRestrictions) Render(r *api.Request, it *IPRestrictionItem) any {
	refs := make([]api.Ref, 0, len(it.PolicyIDs))
	for _, p := range it.PolicyIDs {
		refs = append(refs, policyRef(r, p))
	}
	return IPRestrictionJSON{Head: resource.NewHead(r, f.Path, &it.Meta, it.Described), Enforced: it.Enforced, Type: it.Type, IPPolicies: refs}
}

// Create fills a new restriction from the request body; an api restriction reads its policies
// with the items that verify the caller in one round trip, to compile their rules.
func (f IPRestrictions) Create(ctx context.Context, r *api.Request, it *IPRestrictionItem, m *resource.Mutation) (any, error) {
	var in restrictionCreate
	if err := it.DecodeCreate(r, textCodes, &in); err != nil {
		return nil, err
	}
	if err := checkType(in.Type); err != nil {
		return nil, err
	}
	if in.IPPolicyIDs == nil {
		return nil, api.Invalid("ip_policy_ids", "ip_policy_ids is required: at least one IP policy id (ipp_…)")
	}
	pids, err := checkPolicyIDs(*in.IPPolicyIDs)
	if err != nil {
		return nil, err
	}
	api.Set(&it.Enforced, in.Enforced)
	it.Type, it.PolicyIDs = *in.Type, pids
	if it.Type != TypeAPI {
		// Only an api restriction is compiled from its policies' rules; the others just refer
		// to their policies, which the references' conditions find at commit, unread.
		for _, p := range pids {
			m.Reference(p, 1, errNoPolicy(p))
		}
		return nil, nil
	}
	items, err := f.Kit.Read(ctx, r, policyKeys(it.AccountID, pids)...)
	if err != nil {
		return nil, err
	}
	pols, err := policiesOf(pids, items)
	if err != nil {
		return nil, err
	}
	for _, p := range pols {
		reference(m, it, p, 1)
	}
	return nil, f.syncAPI(ctx, r, m, it, pols, false)
}

// errNoPolicy is the 400 for a restriction naming policy id, which the account does not have.
func errNoPolicy(id string) error {
	return api.Invalid("ip_policy_ids", "IP policy %s does not exist in this account", id)
}

// checkType checks a create body's type.
func checkType(typ *string) error {
	if typ != nil && slices.Contains(restrictionTypes, *typ) {
		return nil
	}
	got := "nothing"
	if typ != nil {
		got = api.Describe(*typ)
	}
	return api.Invalid("type", "type must be one of dashboard, api, agent or endpoints, not %s", got)
}

// UpdateReads are the policies a PATCH body lists, read with the restriction
// (resource.UpdateReader): the ones it does not use yet are compiled from that read.
func (IPRestrictions) UpdateReads(r *api.Request, account string) []store.Key {
	var in restrictionUpdate
	if api.Decode(r, &in) != nil || in.IPPolicyIDs == nil {
		return nil
	}
	pids, err := checkPolicyIDs(*in.IPPolicyIDs)
	if err != nil {
		return nil
	}
	return policyKeys(account, pids)
}

// Update applies a PATCH body: a new policy list references the policies added and releases
// those removed.
func (f IPRestrictions) Update(ctx context.Context, r *api.Request, it *IPRestrictionItem, m *resource.Mutation) error {
	var in restrictionUpdate
	if err := it.DecodePatch(r, textCodes, &in); err != nil {
		return err
	}
	var added []*IPPolicyItem
	changed := in.Enforced != nil && *in.Enforced != it.Enforced
	if in.IPPolicyIDs != nil {
		pids, err := checkPolicyIDs(*in.IPPolicyIDs)
		if err != nil {
			return err
		}
		if added, err = f.repoint(ctx, m, it, pids); err != nil {
			return err
		}
		changed = changed || !slices.Equal(pids, it.PolicyIDs)
		it.PolicyIDs = pids
	}
	api.Set(&it.Enforced, in.Enforced)
	if !changed {
		return nil
	}
	return f.syncAPI(ctx, r, m, it, added, in.IPPolicyIDs == nil)
}

// repoint references the policies of pids that it does not use yet (read here, and returned)
// and releases those it stops using.
func (f IPRestrictions) repoint(ctx context.Context, m *resource.Mutation, it *IPRestrictionItem, pids []string) ([]*IPPolicyItem, error) {
	var newIDs []string
	for _, p := range pids {
		if !slices.Contains(it.PolicyIDs, p) {
			newIDs = append(newIDs, p)
		}
	}
	var added []*IPPolicyItem
	if len(newIDs) > 0 {
		items, err := m.GetMany(ctx, policyKeys(it.AccountID, newIDs)...)
		if err != nil {
			return nil, err
		}
		if added, err = policiesOf(newIDs, items); err != nil {
			return nil, err
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
	return added, nil
}

// Delete releases the restriction's policies and, for an api restriction, removes it from the
// compiled state.
func (f IPRestrictions) Delete(ctx context.Context, r *api.Request, it *IPRestrictionItem, m *resource.Mutation) error {
	for _, p := range it.PolicyIDs {
		m.Reference(p, -1, nil)
	}
	if it.Type != TypeAPI {
		return nil
	}
	return changeAPIRestriction(ctx, f.Kit, r, m, "id", always, func(s *iprestrict.State) { s.RemoveRestriction(it.ID) })
}

// syncAPI puts an api restriction into the compiled state; read holds the policies whose rules
// the state may not have yet. A change of enforced alone names that field in a lockout.
func (f IPRestrictions) syncAPI(ctx context.Context, r *api.Request, m *resource.Mutation, it *IPRestrictionItem, read []*IPPolicyItem, onlyEnforced bool) error {
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
	x := iprestrict.Restriction{ID: it.ID, Enforced: it.Enforced, PolicyIDs: it.PolicyIDs}
	return changeAPIRestriction(ctx, f.Kit, r, m, field, always, func(s *iprestrict.State) { s.PutRestriction(x, rules) })
}

// reference counts restriction it as a referrer of policy p. For an api restriction the
// policy's rules are compiled from this read, so its version must not have moved at commit.
func reference(m *resource.Mutation, it *IPRestrictionItem, p *IPPolicyItem, delta int64) {
	if it.Type == TypeAPI {
		m.Reference(p.ID, delta, nil, store.AtVersion(p.Version))
		return
	}
	m.Reference(p.ID, delta, nil)
}

// policyKeys are the keys of the policies pids of account.
func policyKeys(account string, pids []string) []store.Key {
	keys := make([]store.Key, len(pids))
	for i, p := range pids {
		keys[i] = store.ResourceKey(account, p)
	}
	return keys
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

// policiesOf decodes the policies read for pids; a missing one is a 400 naming it.
func policiesOf(pids []string, items []store.Item) ([]*IPPolicyItem, error) {
	out := make([]*IPPolicyItem, len(pids))
	for i, it := range items {
		if it == nil {
			return nil, errNoPolicy(pids[i])
		}
		out[i] = &IPPolicyItem{}
		if err := store.Unmarshal(it, out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}
