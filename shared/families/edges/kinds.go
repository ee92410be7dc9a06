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
		f := Field(field, "ip_policy_ids")
		var list []string
		if in.IPPolicyIDs != nil {
			list = *in.IPPolicyIDs
		}
		switch {
		case len(list) == 0:
			return nil, api.BadRequest(CodeNoIPPolicy, f, "an IP restriction module needs at least one IP policy in %s", f)
		case len(list) > MaxIPPolicies:
			return nil, api.BadRequest(CodeTooManyIPPolicies, f, "%s lists %d IP policies; the limit is %d", f, len(list), MaxIPPolicies)
		}
		if err := checkIDs(f, list, ids.IPPolicy, CodeIPPolicyMissing, "IP policy"); err != nil {
			return nil, err
		}
		return &IPRestriction{Enabled: enabledOr(in.Enabled), IPPolicyIDs: slices.Clone(list)}, nil
	},
	Refs: func(s *IPRestriction) []string { return s.IPPolicyIDs },
	Missing: func(field, id string) error {
		return api.BadRequest(CodeIPPolicyMissing, Field(field, "ip_policy_ids"), "IP policy %s does not exist in this account", id)
	},
	Render: func(r *api.Request, s *IPRestriction) *IPRestrictionJSON {
		return &IPRestrictionJSON{Enabled: s.Enabled, IPPolicies: refs(r, access.IPPoliciesDescriptor.Path, s.IPPolicyIDs)}
	},
}

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
		f := Field(field, "certificate_authority_ids")
		var list []string
		if in.CertificateAuthorityIDs != nil {
			list = *in.CertificateAuthorityIDs
		}
		if len(list) > MaxCAs {
			return nil, api.BadRequest(CodeTooManyCAs, f, "%s lists %d certificate authorities; the limit is %d", f, len(list), MaxCAs)
		}
		if err := checkIDs(f, list, ids.CertificateAuthority, CodeCAMissing, "certificate authority"); err != nil {
			return nil, err
		}
		return &MutualTLS{Enabled: enabledOr(in.Enabled), CertificateAuthorityIDs: slices.Clone(list)}, nil
	},
	Refs: func(s *MutualTLS) []string { return s.CertificateAuthorityIDs },
	Missing: func(field, id string) error {
		return api.BadRequest(CodeCAMissing, Field(field, "certificate_authority_ids"), "certificate authority %s does not exist in this account", id)
	},
	Render: func(r *api.Request, s *MutualTLS) *MutualTLSJSON {
		return &MutualTLSJSON{Enabled: s.Enabled, CertificateAuthorities: refs(r, tlscerts.CertificateAuthoritiesDescriptor.Path, s.CertificateAuthorityIDs)}
	},
	NeedsTermination: true,
}

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

// checkIDs refuses a list of ids that holds one not of kind prefix (code: it cannot exist) or
// the same id twice.
func checkIDs(field string, list []string, prefix, code, what string) error {
	for i, id := range list {
		f := field + "[" + strconv.Itoa(i) + "]"
		if !ids.Is(id, prefix) {
			return api.BadRequest(code, f, "%s %s is not an id of a %s (%s_…)", f, api.Describe(id), what, prefix)
		}
		if slices.Contains(list[:i], id) {
			return api.Invalid(f, "%s %s is listed twice", what, id)
		}
	}
	return nil
}

// refs is the response form of references to ids of the family at path.
func refs(r *api.Request, path string, list []string) []api.Ref {
	out := make([]api.Ref, 0, len(list))
	for _, id := range list {
		out = append(out, api.Ref{ID: id, URI: r.URI(path + "/" + id)})
	}
	return out
}
