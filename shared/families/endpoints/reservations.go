package endpoints

import (
	"context"
	"slices"
	"strings"

	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/families/endpoints/view"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/resource"
)

// Codes of public URLs, which must be reservations of the endpoint's account: a tcp URL a
// reserved address, any other URL's host a reserved domain (the name itself, or under a
// reserved wildcard).
//
// As on the platform, a Domain is created first, then the endpoint on it. An http, https or tls
// URL's host must be a reserved domain of the account, or one label under a reserved wildcard
// of it; a wildcard host must be reserved exactly. Otherwise: 320 when another account holds
// the name (or the wildcard over it), 321 for a wildcard *.x.P whose account holds only *.P, 318
// for any other wildcard, 319 for any other host. Public http is served on port 80, https and
// tls on 443: any other port is ERR_NGROK_249. A tcp URL must be a reserved address of the
// account (its host:port): an address another account reserved is 309, any other tcp URL 307,
// whether its host:port is in a region's address pool and nobody reserved it, is a pool host on
// a port outside the pool, or is on a host the service does not own (the platform's addresses
// are all handed out by it, so an address outside the pools can never be served; 249 stays the
// code of a URL that does not parse). The refusals name url, or bindings when a PATCH keeps the
// URL and makes it public. Internal (.internal) and kubernetes endpoints are served on no
// public address, so they need no reservation and keep any port. The platform's request bodies
// name no region for an endpoint, so there is no region to compare a reservation's with (311,
// 317, 322).
const (
	// CodeAddrNotReserved is the refusal of a public tcp URL that is no reserved address.
	CodeAddrNotReserved = "ERR_NGROK_307"
	// CodeAddrOfAnotherAccount is the refusal of a tcp URL on an address another account reserved.
	CodeAddrOfAnotherAccount = "ERR_NGROK_309"
	// CodeWildcardNotReserved is the refusal of a public wildcard host (*.P) nobody reserved.
	CodeWildcardNotReserved = "ERR_NGROK_318"
	// CodeHostNotReserved is the refusal of a public host no reserved domain covers.
	CodeHostNotReserved = "ERR_NGROK_319"
	// CodeDomainOfAnotherAccount is the refusal of a public host another account reserved.
	CodeDomainOfAnotherAccount = "ERR_NGROK_320"
	// CodeWildcardNotExact is the refusal of a public wildcard host *.x.P whose account holds
	// only the wider wildcard *.P, which covers names one label under P, not *.x.P.
	CodeWildcardNotExact = "ERR_NGROK_321"
)

// reference points the endpoint (its bindings set) at the reservations of its account that u
// is on (the reserved domain of its host and, for a tcp URL, the reserved address of its
// host:port), looked up through db, dropping the references to those it was on, in the
// endpoint's transaction. A reservation deleted meanwhile makes the whole mutation run again,
// finding it gone then. An address another account reserved is refused (309), and a public
// URL on no reservation of the account (checkPublic), both naming field.
//
// The endpoint reports the reservations as domain and tcp_addr: every public http, https or tls
// endpoint has domain, every public tcp one tcp_addr, and a reservation cannot be deleted while
// an endpoint references it (ERR_NGROK_446). The reservations are looked up in what the process
// knows of their guards, which the transaction asserts, so the check adds no DynamoDB call.
func reference(ctx context.Context, db domains.DB, m *resource.Mutation, it *EndpointItem, u URL, field string) error {
	res, err := domains.Lookup(ctx, db, it.AccountID, u.Host, reservedAddr(u))
	if err != nil {
		return err
	}
	if res.Addr.AccountID != "" && res.Addr.AccountID != it.AccountID {
		return api.BadRequest(CodeAddrOfAnotherAccount, field, "%s is an address reserved by another account", u.HostPort())
	}
	m.Repoint(&it.DomainID, res.Domain)
	m.Repoint(&it.AddrID, res.Addr.ID)
	return checkPublic(it, u, res, field)
}

// checkPublic refuses, naming field, a public endpoint on u that the service would not serve:
// a tcp URL that is no reserved address of its account (307); an http URL off port 80 or an
// https or tls URL off 443 (249); a host no reserved domain of its account covers (318 to 321,
// by what res found). Internal and kubernetes bindings are not served on public addresses, so
// they need neither.
func checkPublic(it *EndpointItem, u URL, res domains.Reservations, field string) error {
	if !slices.Contains(it.Bindings, BindingPublic) {
		return nil
	}
	if u.Scheme == "tcp" {
		if it.AddrID != "" {
			return nil
		}
		return api.BadRequest(CodeAddrNotReserved, field, "%s is not a reserved address of this account: a public tcp endpoint must be on one; reserve one with POST /reserved_addrs and use its addr (tcp://<addr>)", u.HostPort())
	}
	if want, _ := view.DefaultPort(u.Scheme); u.Port != want {
		return api.BadRequest(CodeInvalidURL, field, "a public %s endpoint is served on port %d, not %d", u.Scheme, want, u.Port)
	}
	if it.DomainID != "" {
		return nil
	}
	reserve := "reserve it with POST /reserved_domains first"
	switch wildcard := strings.HasPrefix(u.Host, "*."); {
	case res.Elsewhere:
		return api.BadRequest(CodeDomainOfAnotherAccount, field, "%s is a domain reserved by another account", u.Host)
	case wildcard && res.Wider != "":
		wider := parentOf(parentOf(u.Host))
		return api.BadRequest(CodeWildcardNotExact, field, "wildcard %s must be reserved with an exact match: the reserved *.%s covers only names one label under %s; %s", u.Host, wider, wider, reserve)
	case wildcard:
		return api.BadRequest(CodeWildcardNotReserved, field, "wildcard domain %s must be reserved before use: %s", u.Host, reserve)
	default:
		return api.BadRequest(CodeHostNotReserved, field, "%s must be reserved before use: a public endpoint's host is a reserved domain of its account or one label under a reserved wildcard; %s", u.Host, reserve)
	}
}

// parentOf is host without its first label.
func parentOf(host string) string {
	_, parent, _ := strings.Cut(host, ".")
	return parent
}

// reservedAddr is the address u may be a reservation of: a tcp URL's host:port, else "".
func reservedAddr(u URL) string {
	if u.Scheme != "tcp" {
		return ""
	}
	return u.HostPort()
}
