package domains

import (
	"context"
	"slices"
	"strings"

	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/store"
)

// Holder is the reservation holding a name or an address: its id and account (zero when none).
type Holder struct {
	ID        string `dynamodbav:"id"`
	AccountID string `dynamodbav:"account"`
}

// Held is what holds one hostport: the reserved domain its host is (the name itself, else the
// wildcard over its parent) and the reserved address it is.
type Held struct {
	Domain, Addr Holder
}

// HolderKeys are the keys Holders reads for hostports, for callers that read them ahead with
// other items.
func HolderKeys(hostports []string) []store.Key {
	var keys []store.Key
	for _, hp := range hostports {
		host := hp[:max(strings.LastIndexByte(hp, ':'), 0)]
		keys = append(keys, addrGuardKey(hp), nameGuardKey(host), nameGuardKey(wildcardOver(host)))
	}
	return keys
}

// Holders reads who holds each of hostports ("host:port", host lowercase) as a reserved domain
// and as a reserved address, every guard in one round trip (the keys of HolderKeys). Edges use
// it to check that their hostports are reservations of their own account.
func Holders(ctx context.Context, db DB, hostports []string) (_ []Held, err error) {
	defer derrors.Wrap(&err, "domains.Holders")
	items, err := db.GetMany(ctx, HolderKeys(hostports)...)
	if err != nil {
		return nil, err
	}
	out := make([]Held, len(hostports))
	for i := range hostports {
		addr, name, wild := items[3*i], items[3*i+1], items[3*i+2]
		if addr != nil {
			if err := store.Unmarshal(addr, &out[i].Addr); err != nil {
				return nil, err
			}
		}
		for _, raw := range []store.Item{name, wild} {
			if raw != nil && out[i].Domain.ID == "" {
				if err := store.Unmarshal(raw, &out[i].Domain); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// wildcardOver is the wildcard name covering host ("*.example.com" for "a.example.com"), or
// host itself when none can (a wildcard, or a name of two labels).
func wildcardOver(host string) string {
	if _, parent, ok := strings.Cut(host, "."); ok && strings.Contains(parent, ".") && !strings.HasPrefix(host, "*.") {
		return "*." + parent
	}
	return host
}

// PoolHost reports whether host is a host of some region's TCP address pool: its names serve
// reserved addresses, never domains.
func (c *Config) PoolHost(host string) bool {
	for _, p := range c.AddrPools {
		if slices.Contains(p.Hosts, host) {
			return true
		}
	}
	return false
}
