package domains

import (
	"context"

	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// guard holds a name or an address for the reservation (or ingress) that claimed it: at most
// one exists per name or address. The name and address guards are read by other families (an
// endpoint finds the reservations its URL is on through them, Lookup).
type guard struct {
	store.Key
	AccountID string `dynamodbav:"account"`
	ID        string `dynamodbav:"id"`
}

// Reservations are the reservations an endpoint URL is on, as Lookup finds them.
type Reservations struct {
	// Domain is the id of the account's reserved domain the host is on: the reservation of the
	// host itself, else of the wildcard over its parent; "" when there is none.
	Domain string
	// Addr holds the URL's host:port when it is a reserved address, of whichever account (the
	// caller refuses another account's); zero when it is not, or when no address was looked up.
	Addr Holder
}

// DB is what Lookup reads through.
type DB interface {
	GetMany(ctx context.Context, keys ...store.Key) ([]store.Item, error)
}

// guards is what this process knows of the name and address guards (who holds a name or an
// address) that creates of other families look reservations up in.
var guards = resource.NewFacts("account", "id")

// Known returns the guards as this process knows them, as a DB for Lookup and Holders: each
// answer is a condition of m's transaction (resource.Facts), so a create that looks its
// reservations up through it makes no read in a warm process and can never reference a
// reservation that no longer holds the name or address at commit.
func Known(m *resource.Mutation) DB { return guards.On(m) }

// LookupKeys are the items Lookup reads for host and, when it is not "", the address addr
// (host:port of a tcp URL): the guards of the reservation of host itself, of the wildcard over
// its parent and of the address.
func LookupKeys(host, addr string) []store.Key {
	keys := []store.Key{nameGuardKey(host)}
	if w := wildcardOver(host); w != host {
		keys = append(keys, nameGuardKey(w))
	}
	if addr != "" {
		keys = append(keys, addrGuardKey(addr))
	}
	return keys
}

// Lookup returns the reservations of account an endpoint on host (and, when not "", on the
// reserved address addr) is on, reading every guard (LookupKeys) in one round trip.
func Lookup(ctx context.Context, db DB, account, host, addr string) (_ Reservations, err error) {
	defer derrors.Wrap(&err, "domains.Lookup(%s, %s)", host, addr)
	keys := LookupKeys(host, addr)
	items, err := db.GetMany(ctx, keys...)
	if err != nil {
		return Reservations{}, err
	}
	var out Reservations
	for i, raw := range items {
		if raw == nil {
			continue
		}
		var g guard
		if err := store.Unmarshal(raw, &g); err != nil {
			return Reservations{}, err
		}
		switch {
		case addr != "" && keys[i] == addrGuardKey(addr):
			out.Addr = Holder{AccountID: g.AccountID, ID: g.ID}
		case g.AccountID == account && out.Domain == "":
			out.Domain = g.ID
		}
	}
	return out, nil
}
