package domains

import (
	"context"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// Error codes of reserved addresses.
const (
	CodeAddrBadRegion = "ERR_NGROK_500"
	CodeAddrExhausted = "ERR_NGROK_503"
)

var addrTextCodes = api.TextCodes{Description: "ERR_NGROK_504", Metadata: "ERR_NGROK_505", Empty: "ERR_NGROK_506"}

// ReservedAddrItem is a stored reserved address.
type ReservedAddrItem struct {
	store.Meta
	resource.Described
	Addr   string `dynamodbav:"addr"`
	Region string `dynamodbav:"region"`
	// alloc is the create request's search for a free address, shared by its transaction
	// attempts (each starts from a copy of the prepared item); never stored.
	alloc *allocation `dynamodbav:"-"`
}

// ReservedAddrJSON is the wire form of a reserved address.
type ReservedAddrJSON struct {
	resource.Head
	Addr   string `json:"addr"`
	Region string `json:"region"`
}

type addrCreate struct {
	api.Text
	Region *string `json:"region"`
}

// ReservedAddrsPath is the reserved addresses' collection path, for references to them.
const ReservedAddrsPath = "/reserved_addrs"

// ReservedAddrsDescriptor is the /reserved_addrs family.
//   - A reserved address's addr is host:port allocated from its region's pool. A guard item per
//     address (U#tcp_addr#<host:port>), written in the reservation's own transaction with the
//     condition that it does not exist, makes every address held by at most one reservation;
//     deleting the reservation deletes the guard in the same transaction. A reservation first
//     tries a few random addresses (one transaction each, the first almost always wins), then
//     reads the guards of consecutive addresses a batch at a time to find free ones.
//   - An address a TCP edge has among its hostports is referenced by the edge and cannot be
//     deleted: 400 ERR_NGROK_446, the platform's code for a reserved name an edge still uses.
//     Holders tells edges who holds a hostport as a domain and as an address; PoolHost whether a
//     host serves addresses.
//   - A cloud endpoint whose URL is tcp://<addr> of a reserved address of its account references
//     the reservation in its own transaction (the endpoint shows it as tcp_addr), so it cannot
//     be deleted either (446). Another account's address is the endpoint's 309, and a public tcp
//     endpoint on an address its account has not reserved is 307 (see the endpoints package).
//   - The reserved address schema has no endpoint configuration or edge member (older versions
//     of the platform's API had them), so the codes about those (507, 1619, 7019) have nothing
//     to apply to: endpoints and edges point at addresses, never the reverse.
//   - region not configured is 400 ERR_NGROK_500 naming the region; a region whose pool has no
//     free address is 400 ERR_NGROK_503 (a client error, like every refusal of this API:
//     nothing a client sends may produce a 5xx). Over-long description and metadata are 504
//     and 505; a PATCH supplying neither is 506. The addr and region never change.
var ReservedAddrsDescriptor = &resource.Descriptor{
	Path: ReservedAddrsPath, Prefix: ids.ReservedAddr, ListKey: "reserved_addrs", EventKind: "tcp_address", Filter: true,
	Reads:   []config.Section{config.DomainSettings},
	Binding: func() resource.Binding { return resource.Bind(newReservedAddrs) },
	Release: AddrRelease{},
}

// ReservedAddrs is the reserved address family's rules.
type ReservedAddrs struct {
	*resource.Family[ReservedAddrItem, *ReservedAddrItem]
	Config *Config
}

// newReservedAddrs makes the family's hooks with the configuration of its kit (ConfigOf).
func newReservedAddrs(f *resource.Family[ReservedAddrItem, *ReservedAddrItem]) ReservedAddrs {
	return ReservedAddrs{Family: f, Config: ConfigOf(f.Kit)}
}

// Render returns a reserved address as GET returns it.
func (f ReservedAddrs) Render(r *api.Request, it *ReservedAddrItem) any {
	return ReservedAddrJSON{Head: resource.NewHead(r, f.Path, &it.Meta, it.Described), Addr: it.Addr, Region: it.Region}
}

// InUse is the refusal to delete an address a cloud endpoint or a TCP edge still references
// (446, the platform's code for a reserved name still in use; it has none for addresses).
func (ReservedAddrs) InUse() *api.Error {
	return api.BadRequest(CodeDomainInUse, "id", "the address is still used by a cloud endpoint or a TCP edge's hostports; delete or move the endpoint, or remove it from the edge, first")
}

// Prepare checks the body once per request and starts the search for a free address.
func (f ReservedAddrs) Prepare(ctx context.Context, r *api.Request, it *ReservedAddrItem) error {
	var in addrCreate
	if err := api.Decode(r, &in); err != nil {
		return err
	}
	region := f.Config.DefaultRegion()
	if in.Region != nil {
		region = *in.Region
		if !slices.Contains(f.Config.Regions, region) {
			return api.BadRequest(CodeAddrBadRegion, "region", "region %s is not one of %s", api.Describe(region), strings.Join(f.Config.Regions, ", "))
		}
	}
	if err := it.SetText(addrTextCodes, in.Text); err != nil {
		return err
	}
	it.Region = region
	it.alloc = &allocation{pool: f.Config.AddrPools[region], region: region, db: f.Kit.DB}
	return nil
}

// Create claims the next candidate address with a guard in the reservation's transaction; a
// candidate taken in the meantime makes the whole create run again with the next one.
func (ReservedAddrs) Create(ctx context.Context, r *api.Request, it *ReservedAddrItem, m *resource.Mutation) (any, error) {
	addr, err := it.alloc.next(ctx)
	if err != nil {
		return nil, err
	}
	it.Addr = addr
	m.Put(labelAddr, guard{Key: addrGuardKey(addr), AccountID: it.AccountID, ID: it.ID}, store.Absent())
	m.RetryOn(labelAddr)
	return nil, nil
}

// Update changes description and metadata, the only mutable fields.
func (ReservedAddrs) Update(ctx context.Context, r *api.Request, it *ReservedAddrItem, m *resource.Mutation) error {
	return it.UpdateText(r, addrTextCodes)
}

// Delete frees the address for another reservation, in the deletion's transaction.
func (ReservedAddrs) Delete(ctx context.Context, r *api.Request, it *ReservedAddrItem, m *resource.Mutation) error {
	m.Delete("addr.release", addrGuardKey(it.Addr))
	return nil
}

const labelAddr = "addr"

func addrGuardKey(addr string) store.Key { return store.GuardKey("tcp_addr", addr) }

// randomPicks is how many uniformly random addresses a reservation tries before it reads the
// pool's guards to find free ones: with the pool mostly free the first pick wins and the
// reservation costs its one transaction.
const randomPicks = 3

// allocation is one reservation's search for a free address of a pool: random picks first,
// then a sweep that reads the guards of consecutive addresses (a batch at a time, from a random
// start, wrapping around) and offers those found free. Only when the sweep has read the whole
// pool without finding one is the pool exhausted.
type allocation struct {
	pool         Pool
	region       string
	db           *store.DB
	picks        int
	start, swept int
	free         []int
}

func (a *allocation) next(ctx context.Context) (string, error) {
	size := a.pool.Size()
	if size > 0 && a.picks < randomPicks {
		a.picks++
		return a.pool.Addr(rand.IntN(size)), nil
	}
	if a.swept == 0 && size > 0 {
		a.start = rand.IntN(size)
	}
	for len(a.free) == 0 {
		if a.swept >= size {
			return "", &api.Error{Status: http.StatusBadRequest, Code: CodeAddrExhausted, Field: "region",
				Msg: "no reserved addresses are available in region " + a.region + "; release one or ask the operator to widen the pool"}
		}
		n := min(store.MaxBatchGet, size-a.swept)
		slots := make([]int, n)
		keys := make([]store.Key, n)
		for i := range slots {
			slots[i] = (a.start + a.swept + i) % size
			keys[i] = addrGuardKey(a.pool.Addr(slots[i]))
		}
		items, err := a.db.GetMany(ctx, keys...)
		if err != nil {
			return "", err
		}
		for i, it := range items {
			if it == nil {
				a.free = append(a.free, slots[i])
			}
		}
		// Reservations sweeping at once would otherwise all try the same first free address.
		rand.Shuffle(len(a.free), func(i, j int) { a.free[i], a.free[j] = a.free[j], a.free[i] })
		a.swept += n
	}
	slot := a.free[0]
	a.free = a.free[1:]
	return a.pool.Addr(slot), nil
}

// AddrRelease frees the guard of a stored reservation's address (resource.Descriptor.Release).
type AddrRelease struct{}

// Release implements resource.Releaser.
func (AddrRelease) Release(_ context.Context, _ *store.DB, it store.Item, tx *store.Tx) error {
	a := store.Attrs{Item: it}
	resource.Free(tx, a.String("account"), addrGuardKey(a.String("addr")))
	return a.Err()
}
