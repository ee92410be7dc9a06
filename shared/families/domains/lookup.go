package domains

import (
	"context"
	"strings"

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
	// Elsewhere reports that another account holds the host's name or the wildcard over it
	// (and so this account holds neither: a wildcard and the names it covers have one holder).
	Elsewhere bool
	// Wider is, for a wildcard host *.x.P, the account's reservation of *.P: it covers the names
	// one label under P, so not the wildcard host, which must be reserved exactly; "" otherwise.
	Wider string
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
func Known(m *resource.Mutation) DB { return known{m} }

// known is Known's DB. Every key it is asked for is a name's or an address's guard, which holds
// its key (a name of at most 253 bytes, a host:port), an account and an id: each is declared
// small in m's transaction (store.Tx.Small; TestGuardsAreSmall), so that its check is counted.
type known struct{ m *resource.Mutation }

// GetMany declares each of keys small in k's mutation and returns what the process knows of
// them, as conditions of its transaction (resource.Facts.Assume).
func (k known) GetMany(ctx context.Context, keys ...store.Key) ([]store.Item, error) {
	for _, key := range keys {
		k.m.Small(key)
	}
	return guards.On(k.m).GetMany(ctx, keys...)
}

// LookupKeys are the items Lookup reads for host and, when it is not "", the address addr
// (host:port of a tcp URL): the guards of the reservation of host itself, of the wildcard over
// its parent (for a wildcard host, the wildcard one level up) and of the address.
func LookupKeys(host, addr string) []store.Key {
	keys := []store.Key{nameGuardKey(host)}
	if w := wildcardAbove(host); w != host {
		keys = append(keys, nameGuardKey(w))
	}
	if addr != "" {
		keys = append(keys, addrGuardKey(addr))
	}
	return keys
}

// wildcardAbove is the wildcard whose reservation decides whether host is on a domain: the
// wildcard over it (wildcardOver) for a name, the one over its parent for a wildcard (*.P for
// *.x.P); host itself when there is none.
func wildcardAbove(host string) string {
	if name, ok := strings.CutPrefix(host, "*."); ok {
		if w := wildcardOver(name); w != name {
			return w
		}
		return host
	}
	return wildcardOver(host)
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
	wildcard := strings.HasPrefix(host, "*.")
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
		case wildcard && i > 0:
			// The wildcard above a wildcard host: its own account's only is worth telling.
			if g.AccountID == account {
				out.Wider = g.ID
			}
		case g.AccountID != account:
			out.Elsewhere = true
		case out.Domain == "":
			out.Domain = g.ID
		}
	}
	if out.Domain != "" {
		out.Elsewhere = false
	}
	return out, nil
}
