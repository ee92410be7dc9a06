package iprestrict

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
	"sync"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/api"
	"tunnelapi/shared/auth"
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
	c *Compiled
}

const maxCached = 10000

// CompiledFor returns the compiled form of an account item's state (nil when it has none).
func CompiledFor(acct *auth.AccountItem) (*Compiled, error) {
	if acct == nil || acct.IPXVersion == 0 {
		return nil, nil
	}
	cache.Lock()
	e, ok := cache.m[acct.ID]
	cache.Unlock()
	if ok && e.v == acct.IPXVersion {
		return e.c, nil
	}
	if acct.IsPartial() {
		return nil, auth.ErrNeedAccount
	}
	s, err := Decode(acct.IPX)
	if err != nil {
		return nil, err
	}
	c := s.Compile()
	cache.Lock()
	if len(cache.m) >= maxCached {
		cache.m = map[string]cached{}
	}
	cache.m[acct.ID] = cached{acct.IPXVersion, c}
	cache.Unlock()
	return c, nil
}

// StateOf decodes the restriction state an account item carries (empty when none).
func StateOf(acct *auth.AccountItem) (*State, error) {
	if acct == nil || acct.IPXVersion == 0 {
		return &State{Policies: map[string][]Rule{}}, nil
	}
	if acct.IsPartial() {
		return nil, auth.ErrNeedAccount
	}
	return Decode(acct.IPX)
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

// Update is the account-item update that stores next, with a fresh version (random, never 0,
// so a version can never come back with other content and stale caches cannot match it).
// An empty state removes both attributes, so accounts without restrictions keep the cheapest
// write guard. It fails with a 400 naming field when next would not fit on the item.
func Update(next *State, field string) (expression.UpdateBuilder, error) {
	if next.Empty() {
		return expression.Remove(expression.Name("ipx")).Remove(expression.Name("ipx_v")), nil
	}
	b := next.Encode()
	if len(b) > MaxEncodedBytes {
		return expression.UpdateBuilder{}, api.Invalid(field,
			"the account's API IP restrictions would need %d bytes of rules; the limit is %d: use fewer or wider CIDRs", len(b), MaxEncodedBytes)
	}
	return expression.Set(expression.Name("ipx"), expression.Value(b)).
		Set(expression.Name("ipx_v"), expression.Value(newVersion())), nil
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
