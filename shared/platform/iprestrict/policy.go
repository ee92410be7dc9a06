package iprestrict

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/store"
)

// WarningHeader is the response header an unenforced restriction adds to a request it would
// have refused.
const WarningHeader = "Ngrok-Ip-Restriction-Warning"

// cache holds each account's compiled state by version, so decoding and compiling happen once
// per change rather than once per request.
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

// CompiledFor returns the compiled form of an account item's state (nil when it has none).
func CompiledFor(acct *auth.AccountItem) (*Compiled, error) {
	e, err := lookup(acct)
	if err != nil || e == nil {
		return nil, err
	}
	return e.c, nil
}

// StateOf returns the restriction state of an account item (empty when none). It is shared
// with other callers: Clone it before changing it.
func StateOf(acct *auth.AccountItem) (*State, error) {
	e, err := lookup(acct)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return &State{Policies: map[string][]Rule{}}, nil
	}
	return e.s, nil
}

// lookup returns the decoded and compiled state of acct's version, from this process's cache
// when it has it; ErrNeedAccount when it must first be loaded (auth.Authenticator.LoadIPX).
func lookup(acct *auth.AccountItem) (*cached, error) {
	if acct == nil || acct.IPXVersion == 0 {
		return nil, nil
	}
	cache.Lock()
	e, ok := cache.m[acct.ID]
	cache.Unlock()
	if ok && e.v == acct.IPXVersion {
		return &e, nil
	}
	if acct.IsPartial() {
		return nil, auth.ErrNeedAccount
	}
	s, err := Decode(acct.IPX)
	if err != nil {
		return nil, err
	}
	e = cached{v: acct.IPXVersion, s: s, c: s.Compile()}
	cache.Lock()
	if len(cache.m) >= maxCached {
		cache.m = map[string]cached{}
	}
	cache.m[acct.ID] = e
	cache.Unlock()
	return &e, nil
}

// Policy is the auth.Policy that enforces `api` restrictions: a request from an address an
// enforced restriction refuses gets 403 ERR_NGROK_220; one an unenforced restriction would
// refuse is served with a warning logged and a WarningHeader on the response.
func Policy(logger func() *slog.Logger) auth.Policy {
	return func(r *api.Request, acct *auth.AccountItem) error {
		c, err := CompiledFor(acct)
		if err != nil || c == nil {
			return err
		}
		v := c.Check(r.Source)
		if v.Refused != "" {
			return api.Forbidden(api.CodeIPRestricted,
				"the account's API is restricted by IP: requests from %s are refused by IP restriction %s", r.Source, v.Refused)
		}
		if v.Warned != "" {
			msg := fmt.Sprintf("request from %s would have been refused by IP restriction %s, which is not enforced", r.Source, v.Warned)
			r.Header().Set(WarningHeader, msg)
			log := slog.Default()
			if logger != nil && logger() != nil {
				log = logger()
			}
			log.Warn("ip restriction not enforced", "op", r.OpID, "account", acct.ID, "source", r.Source.String(), "restriction", v.Warned)
		}
		return nil
	}
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

// Item is a stored compiled restriction state: one version of an account's API restrictions.
type Item struct {
	store.Key
	IPX []byte `dynamodbav:"ipx"`
}

// Retired is how long a replaced version's item stays readable: a request that read the
// account item just before a change can still load the version it read (its write then fails
// the guard on that version and retries), so concurrent changes never chase a deleted version.
const Retired = time.Hour

// Write adds to tx what replaces the account's state of version cur with next: next's item
// under a fresh version (random, never 0, so a version can never come back with other content
// and stale caches cannot match it), and an expiry on cur's item (Retired). It returns the
// account-item update that names the new version; an empty next removes the version, so
// accounts without restrictions keep the cheapest write guard. It fails with a 400 naming field
// when next would not fit in an item.
func Write(tx *store.Tx, account string, cur int64, next *State, field string) (expression.UpdateBuilder, error) {
	if cur != 0 {
		tx.Update("ipx.old", store.IPXKey(account, cur),
			expression.Set(expression.Name(store.AttrTTL), expression.Value(time.Now().Add(Retired).Unix())))
	}
	if next.Empty() {
		return expression.Remove(expression.Name("ipx_v")), nil
	}
	b := next.Encode()
	if len(b) > MaxEncodedBytes {
		return expression.UpdateBuilder{}, api.Invalid(field,
			"the account's API IP restrictions would need %d bytes of rules; the limit is %d: use fewer or wider CIDRs", len(b), MaxEncodedBytes)
	}
	v := newVersion()
	tx.Put("ipx.new", Item{Key: store.IPXKey(account, v), IPX: b}, store.Absent())
	return expression.Set(expression.Name("ipx_v"), expression.Value(v)), nil
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
