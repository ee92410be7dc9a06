// Package access holds the IP access resources: IP policies, their rules, and IP restrictions,
// whose `api` kind this service enforces on itself (see package iprestrict).
package access

import (
	"context"
	"errors"
	"net/netip"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/iprestrict"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// Family codes (WIRE.md).
const (
	CodeTextTooLong     = "ERR_NGROK_1421"
	CodeDuplicateCIDR   = "ERR_NGROK_1408"
	CodePolicyNotFound  = "ERR_NGROK_1414"
	CodePolicyReferred  = "ERR_NGROK_1420"
	CodeActionNotAllowd = "ERR_NGROK_1422"
)

var textCodes = api.TextCodes{Description: CodeTextTooLong, Metadata: CodeTextTooLong}

// PolicyItem is a stored IP policy. Its rules are also indexed on it (normalised CIDR → rule),
// so that adding a rule conditions on the CIDR being new to the policy, deleting the policy
// knows every rule to delete with it, and compiling a restriction needs one read per policy.
type PolicyItem struct {
	store.Meta
	Description string `dynamodbav:"description"`
	Metadata    string `dynamodbav:"metadata"`
	// Rules maps cidrKey(cidr) to "<rule id> <action> <cidr>"; never nil once stored, as
	// DynamoDB cannot set a key inside a map attribute that does not exist.
	Rules map[string]string `dynamodbav:"rules"`
}

// PolicyJSON is the wire form of an IP policy.
type PolicyJSON struct {
	ID          string `json:"id"`
	URI         string `json:"uri"`
	CreatedAt   string `json:"created_at"`
	Description string `json:"description"`
	Metadata    string `json:"metadata"`
}

type policyBody struct {
	Description *string `json:"description"`
	Metadata    *string `json:"metadata"`
}

// MaxRulesPerPolicy bounds a policy's rule index so its item stays far below 400 KB.
const MaxRulesPerPolicy = 2000

// maxCascade is how many rules a policy may have and still be deleted with them in one
// transaction: DynamoDB's 100 writes less the policy, its audit event (2) and the auth guard (2).
const maxCascade = store.MaxTxItems - 5

// PoliciesPath is the collection path of IP policies.
const PoliciesPath = "/ip_policies"

// Policies returns the /ip_policies family.
func Policies(k *resource.Kit) *resource.Family[PolicyItem, *PolicyItem] {
	f := &resource.Family[PolicyItem, *PolicyItem]{
		Kit: k, Prefix: ids.IPPolicy, Path: PoliciesPath, ListKey: "ip_policies", EventKind: "ip_policy", Filter: true,
	}
	f.Render = func(r *api.Request, it *PolicyItem) any {
		return PolicyJSON{ID: it.ID, URI: f.URI(r, it.ID), CreatedAt: api.Timestamp(it.CreatedAt),
			Description: it.Description, Metadata: it.Metadata}
	}
	f.Create = func(ctx context.Context, r *api.Request, it *PolicyItem, m *resource.Mutation) (any, error) {
		var in policyBody
		if err := api.Decode(r, &in); err != nil {
			return nil, err
		}
		if err := api.CheckText(textCodes, in.Description, in.Metadata); err != nil {
			return nil, err
		}
		api.Set(&it.Description, in.Description)
		api.Set(&it.Metadata, in.Metadata)
		it.Rules = map[string]string{}
		return nil, nil
	}
	f.Update = func(ctx context.Context, r *api.Request, it *PolicyItem, m *resource.Mutation) error {
		var in policyBody
		if err := api.Decode(r, &in); err != nil {
			return err
		}
		if in.Description == nil && in.Metadata == nil {
			return api.EmptyUpdate("description", "metadata")
		}
		if err := api.CheckText(textCodes, in.Description, in.Metadata); err != nil {
			return err
		}
		api.Set(&it.Description, in.Description)
		api.Set(&it.Metadata, in.Metadata)
		if it.Rules == nil {
			it.Rules = map[string]string{}
		}
		return nil
	}
	f.Delete = func(ctx context.Context, r *api.Request, it *PolicyItem, m *resource.Mutation) error {
		// References bump the policy's version, so this read is current at commit or the delete retries.
		if it.Refs > 0 {
			return api.BadRequest(CodePolicyReferred, "id",
				"IP policy %s is used by %d IP restriction(s) or edge module(s); remove it from them before deleting it", it.ID, it.Refs)
		}
		if len(it.Rules) > maxCascade {
			return api.Conflict("IP policy %s has %d rules; a policy is deleted atomically with at most %d rules, so delete %d of its rules first",
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
	return f
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
func (p *PolicyItem) rules() []iprestrict.Rule {
	out := make([]iprestrict.Rule, 0, len(p.Rules))
	for _, e := range p.Rules {
		if _, r, ok := parseEntry(e); ok {
			out = append(out, r)
		}
	}
	return out
}

// ruleAt returns the rule id holding cidr key in the policy, if any.
func (p *PolicyItem) ruleAt(key string) (string, bool) {
	e, ok := p.Rules[key]
	if !ok {
		return "", false
	}
	id, _, _ := parseEntry(e)
	return id, true
}

// syncIPX recomputes the account's compiled API restriction state with change applied, when
// affected says the current state is concerned, and adds its update (with a lockout check
// naming field) to m. The state comes from the account item this request was verified against,
// and the write guard conditions on its version, so concurrent changes retry instead of racing.
func syncIPX(r *api.Request, m *resource.Mutation, field string, affected func(*iprestrict.State) bool, change func(*iprestrict.State)) error {
	// The state of the version this request was verified against, from this process's cache
	// when it has compiled that version, else loaded.
	acct, err := m.Account(false)
	if err != nil {
		return err
	}
	cur, err := iprestrict.StateOf(acct)
	if errors.Is(err, auth.ErrNeedAccount) {
		if acct, err = m.Account(true); err == nil {
			cur, err = iprestrict.StateOf(acct)
		}
	}
	if err != nil {
		return err
	}
	if !affected(cur) {
		return nil
	}
	next := cur.Clone()
	change(next)
	if err := iprestrict.Lockout(r, next, field); err != nil {
		return err
	}
	upd, err := iprestrict.Write(m.Tx, acct.ID, acct.IPXVersion, next, field)
	if err != nil {
		return err
	}
	m.UpdateAccount(upd)
	return nil
}

// ruleMapPath is the attribute path of one CIDR in a policy's rule index.
func ruleMapPath(key string) expression.NameBuilder {
	return expression.Name("rules").AppendName(expression.Name(key))
}

// policyRef is the response form of a reference to an IP policy.
func policyRef(r *api.Request, id string) api.Ref {
	return api.Ref{ID: id, URI: r.URI(PoliciesPath + "/" + id)}
}
