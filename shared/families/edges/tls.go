package edges

import (
	"tunnelapi/shared/families/edges/hostport"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
)

// TLSEdgeItem is a stored TLS edge.
type TLSEdgeItem struct {
	EdgeBase
	Backend        *Backend        `dynamodbav:"backend,omitempty"`
	IPRestriction  *IPRestriction  `dynamodbav:"ip_restriction,omitempty"`
	MutualTLS      *MutualTLS      `dynamodbav:"mutual_tls,omitempty"`
	TLSTermination *TLSTermination `dynamodbav:"tls_termination,omitempty"`
	TrafficPolicy  *TrafficPolicy  `dynamodbav:"traffic_policy,omitempty"`
}

// TLSEdgeJSON is the wire form of a TLS edge.
type TLSEdgeJSON struct {
	EdgeJSON
	Backend        any `json:"backend"`
	IPRestriction  any `json:"ip_restriction"`
	MutualTLS      any `json:"mutual_tls"`
	TLSTermination any `json:"tls_termination"`
	TrafficPolicy  any `json:"traffic_policy"`
	PolicyJSON
}

var (
	tlsBackend        = Attach(BackendModule, func(it *TLSEdgeItem) **Backend { return &it.Backend })
	tlsIPRestriction  = Attach(IPRestrictionModule, func(it *TLSEdgeItem) **IPRestriction { return &it.IPRestriction })
	tlsMutualTLS      = Attach(MutualTLSModule, func(it *TLSEdgeItem) **MutualTLS { return &it.MutualTLS })
	tlsTLSTermination = Attach(TLSTerminationModule, func(it *TLSEdgeItem) **TLSTermination { return &it.TLSTermination })
	tlsTrafficPolicy  = Attach(TrafficPolicyModule, func(it *TLSEdgeItem) **TrafficPolicy { return &it.TrafficPolicy })
	tlsModules        = NewSet(tlsBackend, tlsIPRestriction, tlsMutualTLS, tlsTLSTermination, tlsTrafficPolicy).
				Rule(TerminationRule(func(it *TLSEdgeItem) *TLSTermination { return it.TLSTermination }))
)

// TLSEdgesDescriptor is the /edges/tls family: edges on reserved domains of the account at port
// 443, with the backend, ip_restriction, mutual_tls, tls_termination and traffic_policy modules.
var TLSEdgesDescriptor = &resource.Descriptor{
	Path: "/edges/tls", Prefix: ids.TLSEdge, ListKey: "tls_edges", EventKind: "tls_edge",
	Reads:   []config.Section{config.DomainSettings},
	Binding: func() resource.Binding { return tlsSpec.Binding() },
	Release: hostport.GuardRelease{},
}

// tlsSpec declares the family to the edges machinery.
var tlsSpec = &Spec[TLSEdgeItem, *TLSEdgeItem]{
	Hostports:            HostportRule{AddressCode: CodeTLSEdgeAddr},
	NullWithoutHostports: true,
	Modules:              tlsModules,
	Render: func(r *api.Request, it *TLSEdgeItem, common EdgeJSON) any {
		return TLSEdgeJSON{EdgeJSON: common, Backend: tlsBackend.Render(r, it), IPRestriction: tlsIPRestriction.Render(r, it),
			MutualTLS: tlsMutualTLS.Render(r, it), TLSTermination: tlsTLSTermination.Render(r, it), TrafficPolicy: tlsTrafficPolicy.Render(r, it)}
	},
}
