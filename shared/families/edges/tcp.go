package edges

import (
	"tunnelapi/shared/families/edges/hostport"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
)

// TCPEdgeItem is a stored TCP edge.
type TCPEdgeItem struct {
	EdgeBase
	Backend       *Backend       `dynamodbav:"backend,omitempty"`
	IPRestriction *IPRestriction `dynamodbav:"ip_restriction,omitempty"`
	TrafficPolicy *TrafficPolicy `dynamodbav:"traffic_policy,omitempty"`
}

// TCPEdgeJSON is the wire form of a TCP edge.
type TCPEdgeJSON struct {
	EdgeJSON
	Backend       any `json:"backend"`
	IPRestriction any `json:"ip_restriction"`
	TrafficPolicy any `json:"traffic_policy"`
	PolicyJSON
}

var (
	tcpBackend       = Attach(BackendModule, func(it *TCPEdgeItem) **Backend { return &it.Backend })
	tcpIPRestriction = Attach(IPRestrictionModule, func(it *TCPEdgeItem) **IPRestriction { return &it.IPRestriction })
	tcpTrafficPolicy = Attach(TrafficPolicyModule, func(it *TCPEdgeItem) **TrafficPolicy { return &it.TrafficPolicy })
	tcpModules       = NewSet(tcpBackend, tcpIPRestriction, tcpTrafficPolicy)
)

// TCPEdgesDescriptor is the /edges/tcp family: edges on reserved addresses of the account, with
// the backend, ip_restriction and traffic_policy modules.
var TCPEdgesDescriptor = &resource.Descriptor{
	Path: "/edges/tcp", Prefix: ids.TCPEdge, ListKey: "tcp_edges", EventKind: "tcp_edge",
	Reads:   []config.Section{config.DomainSettings},
	Binding: func() resource.Binding { return tcpSpec.Binding() },
	Release: hostport.GuardRelease{},
}

// tcpSpec declares the family to the edges machinery.
var tcpSpec = &Spec[TCPEdgeItem, *TCPEdgeItem]{
	Hostports:            HostportRule{Addresses: true},
	NullWithoutHostports: true,
	Modules:              tcpModules,
	Render: func(r *api.Request, it *TCPEdgeItem, common EdgeJSON) any {
		return TCPEdgeJSON{EdgeJSON: common, Backend: tcpBackend.Render(r, it), IPRestriction: tcpIPRestriction.Render(r, it),
			TrafficPolicy: tcpTrafficPolicy.Render(r, it)}
	},
}
