package iprestrict

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/store"
)

// WarningHeader is the response header an unenforced restriction adds to a request it would
// have refused.
const WarningHeader = "Ngrok-Ip-Restriction-Warning"

// attrVersion is the account item's attribute naming the current version (auth.AccountItem's
// Restriction field reads it).
const attrVersion = "ipx_v"

// Accounts is every account's API IP restriction as stored, one item per version, with this
// process's cache of compiled versions. It implements auth.Restrictor; the access family
// derives its writes with Change.
type Accounts struct {
	DB *store.DB
	// Log returns the logger for requests an unenforced restriction would have refused; nil
	// (or a nil logger) logs to slog.Default.
	Log func() *slog.Logger
}

var _ auth.Restrictor = (*Accounts)(nil)

// ItemKey is the key of version v of account's compiled state. It sits in the account's
// partition beside the account item, which names the current version.
func ItemKey(account string, v int64) store.Key {
	return store.IPXKey(account, v)
}

// Item is a stored compiled restriction state: one version of an account's API restrictions.
type Item struct {
	store.Key
	IPX []byte `dynamodbav:"ipx"`
}

// cache holds each account's compiled state by version, so reading, decoding and compiling
// happen once per process and change rather than once per request.
var cache = struct {
	sync.Mutex
	m map[string]cached
}{m: map[string]cached{}}

type cached struct {
	v int64
	s *State // shared: callers Clone before changing it
	c *Compiled
}

const maxCached = 10000

// version returns version v of account's state, decoded and compiled, from this process's cache
// or read from its item; nil for version 0. A version whose item is gone was replaced since the
// account item naming it was read: auth.ErrRetry.
func (x *Accounts) version(ctx context.Context, account string, v int64) (_ *cached, err error) {
	if v == 0 {
		return nil, nil
	}
	// Every request checks its account's version: the operation's arguments are boxed for
	// the message only on failure.
	defer func() {
		if err != nil {
			derrors.Wrap(&err, "iprestrict.version(%s %d)", account, v)
		}
	}()
	cache.Lock()
	e, ok := cache.m[account]
	cache.Unlock()
	if ok && e.v == v {
		return &e, nil
	}
	var it Item
	err = x.DB.Get(ctx, ItemKey(account, v), &it)
	if store.IsNotFound(err) {
		return nil, auth.ErrRetry
	}
	if err != nil {
		return nil, fmt.Errorf("read the item: %w", err)
	}
	s, err := Decode(it.IPX)
	if err != nil {
		return nil, fmt.Errorf("decode the item: %w", err)
	}
	e = cached{v: v, s: s, c: s.Compile()}
	cache.Lock()
	if len(cache.m) >= maxCached {
		cache.m = map[string]cached{}
	}
	cache.m[account] = e
	cache.Unlock()
	return &e, nil
}

// Check enforces version v of account's `api` restrictions on r: a request from an address an
// enforced restriction refuses gets 403 ERR_NGROK_220; one an unenforced restriction would
// refuse is served with a warning logged and a WarningHeader on the response.
func (x *Accounts) Check(ctx context.Context, r *api.Request, account string, v int64) error {
	e, err := x.version(ctx, account, v)
	if err != nil || e == nil {
		return err
	}
	verdict := e.c.Check(r.Source)
	if verdict.Refused != "" {
		return api.Forbidden(api.CodeIPRestricted,
			"the account's API is restricted by IP: requests from %s are refused by IP restriction %s", r.Source, verdict.Refused)
	}
	if verdict.Warned != "" {
		msg := fmt.Sprintf("request from %s would have been refused by IP restriction %s, which is not enforced", r.Source, verdict.Warned)
		r.Header().Set(WarningHeader, msg)
		x.logger().Warn("ip restriction not enforced", "op", r.OpID, "account", account, "source", r.Source.String(), "restriction", verdict.Warned)
	}
	return nil
}

func (x *Accounts) logger() *slog.Logger {
	if x.Log != nil {
		if l := x.Log(); l != nil {
			return l
		}
	}
	return slog.Default()
}

// Guard is the condition on the account item that holds while its restriction is still version
// v (0: none, which keeps the cheapest guard for accounts without restrictions).
func (x *Accounts) Guard(v int64) expression.ConditionBuilder {
	if v == 0 {
		return expression.AttributeNotExists(expression.Name(attrVersion))
	}
	return expression.Name(attrVersion).Equal(expression.Value(v))
}

// State returns version v of account's state (empty for 0). It is shared with other callers:
// Clone it before changing it.
func (x *Accounts) State(ctx context.Context, account string, v int64) (*State, error) {
	e, err := x.version(ctx, account, v)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return &State{Policies: map[string][]Rule{}}, nil
	}
	return e.s, nil
}

// Change derives the writes that apply change to version cur of account's state (the version
// the request was verified against, which its write guard conditions on) and adds them to tx.
// It returns the update of the account item naming the new version, or nil when affected says
// the current state is not concerned. It fails with a 400 naming field when the result would
// lock r's caller out (Lockout) or not fit in an item.
func (x *Accounts) Change(ctx context.Context, r *api.Request, tx *store.Tx, account string, cur int64, field string,
	affected func(*State) bool, change func(*State)) (*expression.UpdateBuilder, error) {
	s, err := x.State(ctx, account, cur)
	if err != nil {
		return nil, err
	}
	if !affected(s) {
		return nil, nil
	}
	next := s.Clone()
	change(next)
	if err := Lockout(r, next, field); err != nil {
		return nil, err
	}
	upd, err := write(tx, account, cur, next, field)
	if err != nil {
		return nil, err
	}
	return &upd, nil
}

// Lockout returns the 400 for a change that would make an enforced restriction refuse the very
// address the change is being made from, naming field; nil when next lets the caller in.
func Lockout(r *api.Request, next *State, field string) error {
	v := next.Compile().Check(r.Source)
	if v.Refused == "" {
		return nil
	}
	return api.Invalid(field, "this change would make IP restriction %s refuse requests from %s, the address this request comes from, "+
		"locking you out of the API; allow that address in one of its policies first, or make the change from an allowed address", v.Refused, r.Source)
}

// Retired is how long a replaced version's item stays readable: a request that read the
// account item just before a change can still load the version it read (its write then fails
// the guard on that version and retries), so concurrent changes never chase a deleted version.
const Retired = time.Hour

// write adds to tx what replaces the account's state of version cur with next: next's item
// under a fresh version (random, never 0, so a version can never come back with other content
// and stale caches cannot match it), and an expiry on cur's item (Retired). It returns the
// account-item update that names the new version; an empty next removes the version, so
// accounts without restrictions keep the cheapest write guard. It fails with a 400 naming field
// when next would not fit in an item.
func write(tx *store.Tx, account string, cur int64, next *State, field string) (expression.UpdateBuilder, error) {
	if cur != 0 {
		tx.Update("ipx.old", ItemKey(account, cur),
			expression.Set(expression.Name(store.AttrTTL), expression.Value(time.Now().Add(Retired).Unix())))
	}
	if next.Empty() {
		return expression.Remove(expression.Name(attrVersion)), nil
	}
	b := next.Encode()
	if len(b) > MaxEncodedBytes {
		return expression.UpdateBuilder{}, api.Invalid(field,
			"the account's API IP restrictions would need %d bytes of rules; the limit is %d: use fewer or wider CIDRs", len(b), MaxEncodedBytes)
	}
	v := newVersion()
	tx.Put("ipx.new", Item{Key: ItemKey(account, v), IPX: b}, store.Absent())
	return expression.Set(expression.Name(attrVersion), expression.Value(v)), nil
}

func newVersion() int64 {
	var b [8]byte
	rand.Read(b[:])
	v := int64(binary.BigEndian.Uint64(b[:]) >> 1)
	if v == 0 {
		v = 1
	}
	return v
}
