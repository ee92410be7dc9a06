// Package domains holds the families of names and addresses the service hands out: reserved
// addresses (/reserved_addrs), reserved domains (/reserved_domains) and agent ingresses
// (/agent_ingresses). Their configuration is package config's Domains (BASE_DOMAIN, DNS_ZONE,
// NAME_SERVERS, REGIONS, ADDR_POOLS; their defaults and meanings are config.Vars), parsed once
// when the function starts: an invalid configuration stops it there, and pools of different
// regions may not share an address. Audit events are of kind tcp_address for addresses, domain
// for domains and agent_ingress (this service's addition) for agent ingresses.
//
// Each family's rules are on its descriptor (ReservedAddrsDescriptor, ReservedDomainsDescriptor,
// AgentIngressesDescriptor). Names are checked by ParseName; that a name, an address or a
// wildcard's names have one holder across accounts is kept by guard items written in the
// reservation's own transaction (Lookup, Holders, the cover guard in cover.go); certificate
// management is CertManagement, and a managed certificate's one holder is kept by
// DropCertificate.
package domains
