package edges

import (
	"context"
	"slices"
	"strconv"

	"tunnelapi/shared/families/access"
	"tunnelapi/shared/families/backends"
	"tunnelapi/shared/families/tlscerts"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/rules/trafficpolicy"
)

// Codes of the module kinds.
const (
	CodeIPPolicyMissing   = "ERR_NGROK_7007"
	CodeTooManyIPPolicies = "ERR_NGROK_7013"
	CodeNoIPPolicy        = "ERR_NGROK_7025"
	CodeCAMissing         = "ERR_NGROK_7072"
	CodeTooManyCAs        = "ERR_NGROK_7075"
	CodeTerminateAt       = "ERR_NGROK_224"
	CodeTLSVersion        = "ERR_NGROK_219"
	CodeUpstream          = "ERR_NGROK_7032"
)

// Limits on the ids one module references: every reference is a write in the transaction that
// stores the module, and a transaction holds at most 100 writes.
const (
	MaxIPPolicies = 10
	MaxCAs        = 10
)

// enabledOr is a module's enabled member: true unless supplied.
func enabledOr(b *bool) bool { return b == nil || *b }

// BackendMutate is the request form of a backend module.
type BackendMutate struct {
	Enabled   *bool   `json:"enabled"`
	BackendID *string `json:"backend_id"`
}

// Backend is a stored backend module: a backend of any kind of the account.
type Backend struct {
	Enabled   bool   `dynamodbav:"enabled"`
	BackendID string `dynamodbav:"backend_id"`
}

// BackendJSON is the response form of a backend module.
type BackendJSON struct {
	Enabled bool    `json:"enabled"`
	Backend api.Ref `json:"backend"`
}

// BackendModule is the backend module: backend_id names a backend of any kind of the account
// (6526 when it is not a backend id, 6527 when it is a malformed one, 6501 when no such backend
// exists).
var BackendModule = &Kind[BackendMutate, Backend, BackendJSON]{
	Name: "backend",
	Check: func(ctx context.Context, field string, in *BackendMutate) (*Backend, error) {
		id := ""
		if in.BackendID != nil {
			id = *in.BackendID
		}
		if err := backends.CheckID(Field(field, "backend_id"), id); err != nil {
			return nil, err
		}
		return &Backend{Enabled: enabledOr(in.Enabled), BackendID: id}, nil
	},
	Refs: func(s *Backend) []string { return []string{s.BackendID} },
	Missing: func(field, id string) error {
		return api.BadRequest(backends.CodeMissing, Field(field, "backend_id"), "backend %s does not exist in this account", id)
	},
	Render: func(r *api.Request, s *Backend) *BackendJSON {
		return &BackendJSON{Enabled: s.Enabled, Backend: backends.Ref(r, s.BackendID)}
	},
}

// IPRestrictionMutate is the request form of an IP restriction module.
type IPRestrictionMutate struct {
	Enabled     *bool     `json:"enabled"`
	IPPolicyIDs *[]string `json:"ip_policy_ids"`
}

// IPRestriction is a stored IP restriction module.
type IPRestriction struct {
	Enabled     bool     `dynamodbav:"enabled"`
	IPPolicyIDs []string `dynamodbav:"ip_policy_ids"`
}

// IPRestrictionJSON is the response form of an IP restriction module.
type IPRestrictionJSON struct {
	Enabled    bool      `json:"enabled"`
	IPPolicies []api.Ref `json:"ip_policies"`
}

// IPRestrictionModule is the IP restriction module: one to MaxIPPolicies IP policies of the
// account (7025 none, 7013 too many, 7007 one that does not exist).
var IPRestrictionModule = &Kind[IPRestrictionMutate, IPRestriction, IPRestrictionJSON]{
	Name: "ip_restriction",
	Check: func(ctx context.Context, field string, in *IPRestrictionMutate) (*IPRestriction, error) {
		list := in.IPPolicyIDs
		if f := Field(field, ipPolicyList.member); list == nil || len(*list) == 0 {
			return nil, api.BadRequest(CodeNoIPPolicy, f, "an IP restriction module needs at least one IP policy in %s", f)
		}
		checked, err := ipPolicyList.check(field, list)
		if err != nil {
			return nil, err
		}
		return &IPRestriction{Enabled: enabledOr(in.Enabled), IPPolicyIDs: checked}, nil
	},
	Refs:    func(s *IPRestriction) []string { return s.IPPolicyIDs },
	Missing: ipPolicyList.missing,
	Render: func(r *api.Request, s *IPRestriction) *IPRestrictionJSON {
		return &IPRestrictionJSON{Enabled: s.Enabled, IPPolicies: ipPolicyList.refs(r, s.IPPolicyIDs)}
	},
}

var ipPolicyList = idList{member: "ip_policy_ids", prefix: ids.IPPolicy, what: "IP policy", whats: "IP policies",
	max: MaxIPPolicies, maxCode: CodeTooManyIPPolicies, missingCode: CodeIPPolicyMissing, path: access.IPPoliciesPath}

// MutualTLSMutate is the request form of a mutual TLS module.
type MutualTLSMutate struct {
	Enabled                 *bool     `json:"enabled"`
	CertificateAuthorityIDs *[]string `json:"certificate_authority_ids"`
}

// MutualTLS is a stored mutual TLS module.
type MutualTLS struct {
	Enabled                 bool     `dynamodbav:"enabled"`
	CertificateAuthorityIDs []string `dynamodbav:"certificate_authority_ids"`
}

// MutualTLSJSON is the response form of a mutual TLS module.
type MutualTLSJSON struct {
	Enabled                bool      `json:"enabled"`
	CertificateAuthorities []api.Ref `json:"certificate_authorities"`
}

// MutualTLSModule is the mutual TLS module: up to MaxCAs certificate authorities of the account
// (7075 too many, 7072 one that does not exist). It needs TLS terminated at the edge.
var MutualTLSModule = &Kind[MutualTLSMutate, MutualTLS, MutualTLSJSON]{
	Name: "mutual_tls",
	Check: func(ctx context.Context, field string, in *MutualTLSMutate) (*MutualTLS, error) {
		checked, err := caList.check(field, in.CertificateAuthorityIDs)
		if err != nil {
			return nil, err
		}
		return &MutualTLS{Enabled: enabledOr(in.Enabled), CertificateAuthorityIDs: checked}, nil
	},
	Refs:    func(s *MutualTLS) []string { return s.CertificateAuthorityIDs },
	Missing: caList.missing,
	Render: func(r *api.Request, s *MutualTLS) *MutualTLSJSON {
		return &MutualTLSJSON{Enabled: s.Enabled, CertificateAuthorities: caList.refs(r, s.CertificateAuthorityIDs)}
	},
	NeedsTermination: true,
}

var caList = idList{member: "certificate_authority_ids", prefix: ids.CertificateAuthority, what: "certificate authority",
	whats: "certificate authorities", max: MaxCAs, maxCode: CodeTooManyCAs, missingCode: CodeCAMissing,
	path: tlscerts.CertificateAuthoritiesPath}

// Values of a TLS termination module.
const (
	TerminateAtEdge     = "edge"
	TerminateAtUpstream = "upstream"
)

var tlsVersions = []string{"1.2", "1.3"}

// TLSTermination is the request form and the stored form of a TLS termination module.
type TLSTermination struct {
	Enabled     *bool   `json:"enabled" dynamodbav:"enabled"`
	TerminateAt *string `json:"terminate_at" dynamodbav:"terminate_at"`
	MinVersion  *string `json:"min_version" dynamodbav:"min_version"`
}

// TLSTerminationJSON is the response form of a TLS termination module.
type TLSTerminationJSON struct {
	Enabled     bool    `json:"enabled"`
	TerminateAt string  `json:"terminate_at"`
	MinVersion  *string `json:"min_version"`
}

// Upstream reports whether the module passes TLS through to the upstream.
func (t *TLSTermination) Upstream() bool {
	return t != nil && t.TerminateAt != nil && *t.TerminateAt == TerminateAtUpstream
}

// TLSTerminationModule is the TLS termination module: terminate_at edge (the default) or
// upstream (224), min_version 1.2, 1.3 or null for the service's default (219), and null when
// TLS is terminated upstream (7032).
var TLSTerminationModule = &Kind[TLSTermination, TLSTermination, TLSTerminationJSON]{
	Name: "tls_termination",
	Check: func(ctx context.Context, field string, in *TLSTermination) (*TLSTermination, error) {
		at := TerminateAtEdge
		if in.TerminateAt != nil {
			at = *in.TerminateAt
		}
		if at != TerminateAtEdge && at != TerminateAtUpstream {
			return nil, api.BadRequest(CodeTerminateAt, Field(field, "terminate_at"), "terminate_at %s is not edge or upstream", api.Describe(at))
		}
		f := Field(field, "min_version")
		if v := in.MinVersion; v != nil {
			if !slices.Contains(tlsVersions, *v) {
				return nil, api.BadRequest(CodeTLSVersion, f, "min_version %s is not a supported TLS version (1.2 or 1.3)", api.Describe(*v))
			}
			if at == TerminateAtUpstream {
				return nil, api.BadRequest(CodeUpstream, f, "min_version must be null when TLS is terminated upstream: the edge does not terminate it")
			}
		}
		enabled := enabledOr(in.Enabled)
		return &TLSTermination{Enabled: &enabled, TerminateAt: &at, MinVersion: in.MinVersion}, nil
	},
	Render: func(r *api.Request, s *TLSTermination) *TLSTerminationJSON {
		at := TerminateAtEdge
		if s.TerminateAt != nil {
			at = *s.TerminateAt
		}
		return &TLSTerminationJSON{Enabled: enabledOr(s.Enabled), TerminateAt: at, MinVersion: s.MinVersion}
	},
}

// TerminationRule is the rule of a set holding a TLS termination module (found with term): with
// TLS terminated upstream, no module that needs it terminated at the edge may be stored (7032
// naming that module).
func TerminationRule[H any](term func(h *H) *TLSTermination) func(set *Set[H], h *H) error {
	return func(set *Set[H], h *H) error {
		if !term(h).Upstream() {
			return nil
		}
		for _, mod := range set.modules {
			if mod.needsTermination() && mod.Present(h) {
				return api.BadRequest(CodeUpstream, mod.Name(), "the %s module needs TLS terminated at the edge, but tls_termination.terminate_at is upstream", mod.Name())
			}
		}
		return nil
	}
}

// TrafficPolicy is the request form and the stored form of a traffic policy module.
type TrafficPolicy struct {
	Enabled *bool   `json:"enabled" dynamodbav:"enabled"`
	Value   *string `json:"value" dynamodbav:"value"`
}

// TrafficPolicyJSON is the response form of a traffic policy module.
type TrafficPolicyJSON struct {
	Enabled bool   `json:"enabled"`
	Value   string `json:"value"`
}

// TrafficPolicyModule is the traffic policy module: value is a traffic policy document (YAML or
// JSON), checked by the traffic policy validator.
var TrafficPolicyModule = &Kind[TrafficPolicy, TrafficPolicy, TrafficPolicyJSON]{
	Name: "traffic_policy",
	Check: func(ctx context.Context, field string, in *TrafficPolicy) (*TrafficPolicy, error) {
		f := Field(field, "value")
		if in.Value == nil {
			return nil, api.Invalid(f, "%s is required: a traffic policy document in YAML or JSON", f)
		}
		if err := trafficpolicy.Validate(ctx, f, *in.Value); err != nil {
			return nil, err
		}
		enabled := enabledOr(in.Enabled)
		return &TrafficPolicy{Enabled: &enabled, Value: in.Value}, nil
	},
	Render: func(r *api.Request, s *TrafficPolicy) *TrafficPolicyJSON {
		v := ""
		if s.Value != nil {
			v = *s.Value
		}
		return &TrafficPolicyJSON{Enabled: enabledOr(s.Enabled), Value: v}
	},
}

// idList is a module member listing ids of one family of the account, which the module
// references: the member's name, the ids' prefix, what one and several of them are called in
// messages, how many it may list (maxCode past that), the code of an id that names none of the
// account's, and the family's path.
type idList struct {
	member, prefix, what, whats string
	max                         int
	maxCode, missingCode, path  string
}

// check returns the ids of in, the list's value in the module at field: at most l.max, each of
// the family's prefix (l.missingCode: it cannot exist) and listed once.
func (l idList) check(field string, in *[]string) ([]string, error) {
	f := Field(field, l.member)
	var list []string
	if in != nil {
		list = *in
	}
	if len(list) > l.max {
		return nil, api.BadRequest(l.maxCode, f, "%s lists %d %s; the limit is %d", f, len(list), l.whats, l.max)
	}
	for i, id := range list {
		f := f + "[" + strconv.Itoa(i) + "]"
		if !ids.Is(id, l.prefix) {
			return nil, api.BadRequest(l.missingCode, f, "%s %s is not an id of a %s (%s_…)", f, api.Describe(id), l.what, l.prefix)
		}
		if slices.Contains(list[:i], id) {
			return nil, api.Invalid(f, "%s %s is listed twice", l.what, id)
		}
	}
	return slices.Clone(list), nil
}

// missing is the refusal of the id, listed in the module at field, that names nothing of the
// account's.
func (l idList) missing(field, id string) error {
	return api.BadRequest(l.missingCode, Field(field, l.member), "%s %s does not exist in this account", l.what, id)
}

// refs is the response form of the references in list.
func (l idList) refs(r *api.Request, list []string) []api.Ref {
	out := make([]api.Ref, 0, len(list))
	for _, id := range list {
		out = append(out, api.Ref{ID: id, URI: r.URI(l.path + "/" + id)})
	}
	return out
}
