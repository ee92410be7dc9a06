package edges

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/families/edges/hostport"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// Codes of hostports.
const (
	CodeHostportFormat     = "ERR_NGROK_7104"
	CodePortRange          = "ERR_NGROK_7112"
	CodeAddrNotReserved    = "ERR_NGROK_7113"
	CodeAddrOtherAccount   = "ERR_NGROK_7114"
	CodeDomainPort         = "ERR_NGROK_7116"
	CodeDomainNotReserved  = "ERR_NGROK_7117"
	CodeDomainOtherAccount = "ERR_NGROK_7118"
	CodeTCPEdgeDomain      = "ERR_NGROK_7120"
	CodeHTTPSEdgeAddr      = "ERR_NGROK_7121"
	CodeHostportTaken      = "ERR_NGROK_7122"
	CodeTooManyHostports   = "ERR_NGROK_7129"
	CodeTLSEdgeAddr        = "ERR_NGROK_7133"
	fieldHostports         = "hostports"
	labelHostport          = "hostport"
	labelHostportRelease   = "hostport.release"
	domainPort             = 443
)

// MaxHostports bounds an edge's hostports (7129): each is a guard and a reference written in
// the edge's transactions, which hold at most 100 writes.
const MaxHostports = 10

// HostportRule is what an edge family's hostports must be.
//
// Hostports are "hostname:portnumber" (7104; the host a valid name, wildcards allowed), port
// 1-65535 (7112), at most MaxHostports (7129), none twice (215); stored lowercase without
// leading zeros in the port. TLS edges (and HTTPS edges) take reserved domains of the account at
// port 443: another port 7116, a name no account reserved 7117, one another account reserved
// 7118, a TCP address or a host of an address pool 7133 (HTTPS: 7121); a wildcard reservation
// covers the names one label under it. TCP edges take reserved addresses of the account: a host
// that is no address pool's 7120, an address not reserved 7113 (in any region's pool, or a pool
// host on a port outside its pool), reserved by another account 7114: the platform's edge codes
// for what a cloud endpoint is refused with 307 and 309; a TCP edge names no region, so the
// region of its addresses is never in question (311).
//
// A create finds who holds a hostport (domains.Holders) in what the process knows of the
// reservations' guards (domains.Known), each asserted by the create's one transaction: warm, a
// create is one DynamoDB call; a stale or unknown guard fails that commit (or, for a refusal, is
// read before answering) and the create runs again on the guard as it is. A PATCH reads them
// with the edge (resource.UpdateReader), so it stays one read and one transaction. The edge
// references the reservation, so it cannot be deleted while an edge serves it, and a
// reservation deleted meanwhile refuses the edge's transaction (7117/7113). A hostport belongs
// to at most one edge of any family (hostportGuard, 7122).
type HostportRule struct {
	// Addresses is set for edges on reserved TCP addresses of the account (TCP edges: 7120 for
	// anything else, 7113 an address not reserved, 7114 reserved by another account). Unset,
	// hostports are reserved domains of the account on port 443 (TLS and HTTPS edges: 7116
	// another port, 7117 a name not reserved, 7118 reserved by another account).
	Addresses bool
	// AddressCode refuses a TCP address on an edge of domains (7133 TLS, 7121 HTTPS).
	AddressCode string
}

// hostports checks hostports against a rule with the deployment's configuration.
type hostports struct {
	HostportRule
	config *domains.Config
}

// normalise checks the format of in (7104, port 7112, count 7129, duplicates, the rule's kind of
// host) and returns the hostports normalised (lowercase host, port without leading zeros).
func (h hostports) normalise(in []string) ([]string, error) {
	if len(in) > MaxHostports {
		return nil, api.BadRequest(CodeTooManyHostports, fieldHostports, "an edge has at most %d hostports, not %d", MaxHostports, len(in))
	}
	out := make([]string, 0, len(in))
	for i, raw := range in {
		f := fieldHostports + "[" + strconv.Itoa(i) + "]"
		host, port, err := parseHostport(f, raw)
		if err != nil {
			return nil, err
		}
		hp := host + ":" + strconv.Itoa(port)
		if slices.Contains(out, hp) {
			return nil, api.Invalid(f, "hostport %s is listed twice", hp)
		}
		pool := h.config.PoolHost(host)
		switch {
		case h.Addresses && !pool:
			return nil, api.BadRequest(CodeTCPEdgeDomain, f, "%s is not a TCP address: TCP edges take reserved addresses (host:port of /reserved_addrs), not domains", hp)
		case !h.Addresses && pool:
			return nil, api.BadRequest(h.AddressCode, f, "%s is a TCP address: this edge takes reserved domains on port %d, not TCP addresses", hp, domainPort)
		case !h.Addresses && port != domainPort:
			return nil, api.BadRequest(CodeDomainPort, f, "%s: a domain is served on port %d only", hp, domainPort)
		}
		out = append(out, hp)
	}
	return out, nil
}

// resolve checks in (normalise, then who holds each, reserved) and returns the normalised
// hostports with the reservation of account each is on.
func (h hostports) resolve(ctx context.Context, db domains.DB, account string, in []string) ([]string, map[string]string, error) {
	out, err := h.normalise(in)
	if err != nil {
		return nil, nil, err
	}
	reservations, err := h.reserved(ctx, db, account, out)
	if err != nil {
		return nil, nil, err
	}
	return out, reservations, nil
}

// reserved returns the reservation of account each of the normalised hostports hps is on, who
// holds them read through db in one round trip, or the refusal of the first that is on none.
func (h hostports) reserved(ctx context.Context, db domains.DB, account string, hps []string) (map[string]string, error) {
	reservations := make(map[string]string, len(hps))
	if len(hps) == 0 {
		return reservations, nil
	}
	held, err := domains.Holders(ctx, db, hps)
	if err != nil {
		return nil, err
	}
	for i, hp := range hps {
		f := fieldHostports + "[" + strconv.Itoa(i) + "]"
		id, err := h.holder(f, hp, held[i], account)
		if err != nil {
			return nil, err
		}
		reservations[hp] = id
	}
	return reservations, nil
}

// holder returns the reservation of account that hostport hp is on, or the refusal.
func (h hostports) holder(f, hp string, held domains.Held, account string) (string, error) {
	host := hp[:strings.LastIndexByte(hp, ':')]
	if h.Addresses {
		switch held.Addr.AccountID {
		case account:
			return held.Addr.ID, nil
		case "":
			return "", api.BadRequest(CodeAddrNotReserved, f, "%s is not a reserved address; reserve it with POST /reserved_addrs first", hp)
		default:
			return "", api.BadRequest(CodeAddrOtherAccount, f, "%s is reserved by another account", hp)
		}
	}
	switch {
	case held.Addr.ID != "":
		return "", api.BadRequest(h.AddressCode, f, "%s is a TCP address: this edge takes reserved domains on port %d, not TCP addresses", hp, domainPort)
	case held.Domain.AccountID == account:
		return held.Domain.ID, nil
	case held.Domain.AccountID == "":
		return "", api.BadRequest(CodeDomainNotReserved, f, "%s is not a reserved domain; reserve it with POST /reserved_domains first", host)
	default:
		return "", api.BadRequest(CodeDomainOtherAccount, f, "%s is reserved by another account", host)
	}
}

// notReserved is the refusal for a hostport whose reservation vanished before the edge's
// transaction committed.
func (h hostports) notReserved(hp string) error {
	if h.Addresses {
		return api.BadRequest(CodeAddrNotReserved, fieldHostports, "%s is no longer a reserved address", hp)
	}
	return api.BadRequest(CodeDomainNotReserved, fieldHostports, "%s is no longer a reserved domain", hp)
}

// parseHostport reads "hostname:portnumber" (7104) with a port of 1-65535 (7112).
func parseHostport(field, s string) (host string, port int, err error) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 || i == len(s)-1 || strings.Trim(s[i+1:], "0123456789") != "" {
		return "", 0, api.BadRequest(CodeHostportFormat, field, "hostport %s must be hostname:portnumber", api.Describe(s))
	}
	name, err := domains.ParseName(field, s[:i], true)
	if err != nil {
		return "", 0, api.BadRequest(CodeHostportFormat, field, "hostport %s must be hostname:portnumber with a valid hostname", api.Describe(s))
	}
	digits := strings.TrimLeft(s[i+1:], "0")
	port, err = strconv.Atoi(digits)
	if err != nil || len(digits) > 5 || port < 1 || port > 65535 {
		return "", 0, api.BadRequest(CodePortRange, field, "the port of hostport %s is outside 1-65535", api.Describe(s))
	}
	return string(name), port, nil
}

// hostportGuard holds one hostport for the edge serving it: at most one exists per hostport,
// across every edge family.
type hostportGuard struct {
	store.Key
	AccountID string `dynamodbav:"account"`
	EdgeID    string `dynamodbav:"edge_id"`
}

// moveHostports adds to m the guard writes of an edge whose hostports go from before to after:
// released ones are deleted, new ones claimed on the condition that no edge holds them (7122).
func moveHostports(m *resource.Mutation, e *EdgeBase, before, after []string) {
	for _, hp := range before {
		if !slices.Contains(after, hp) {
			m.Delete(labelHostportRelease+":"+hp, hostport.GuardKey(hp))
		}
	}
	for _, hp := range after {
		if slices.Contains(before, hp) {
			continue
		}
		label := labelHostport + ":" + hp
		m.Put(label, hostportGuard{Key: hostport.GuardKey(hp), AccountID: e.AccountID, EdgeID: e.ID}, store.Absent())
		m.Refuse(label, api.BadRequest(CodeHostportTaken, fieldHostports, "hostport %s is already used by another edge", hp))
	}
}
