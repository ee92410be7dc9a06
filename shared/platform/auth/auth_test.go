package auth_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/iprestrict"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/fakedb"
)

// These tests run every authentication outcome against the scripted in-memory table, through
// the real request wrapper (api.Server) and the real restriction package, without DynamoDB
// Local.

// principal is the fixture key's owner: a bot user, whose own item decides whether its keys
// are accepted.
var principal = ids.New(ids.BotUser)

const (
	allowed = "10.1.2.3"
	refused = "192.0.2.1"
)

// token is a token-shaped bearer secret; n makes it unique.
func token(n int) string {
	return fmt.Sprintf("%027d_%021d", n, n)
}

// fixture is one account with one API key in a fresh table.
type fixture struct {
	db      *fakedb.Table
	a       *auth.Authenticator
	account string
	token   string
}

var accounts int

func newFixture(t *testing.T) *fixture {
	t.Helper()
	accounts++
	f := &fixture{db: fakedb.New(), account: fmt.Sprintf("acct_%d", accounts), token: token(accounts)}
	st := store.New(f.db, "test")
	f.a = &auth.Authenticator{DB: st, Restrictor: &iprestrict.Accounts{DB: st, Log: func() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }}}
	f.seed(t, auth.AccountItem{Key: store.AccountKey(f.account), ID: f.account})
	f.seed(t, auth.TokenItem{Key: store.TokenKey(store.TokenHash(f.token)), Kind: auth.KindAPIKey, AccountID: f.account, PrincipalID: principal, ResourceID: "ak_1"})
	f.seed(t, botItem{Key: store.ResourceKey(f.account, principal), Active: true})
	return f
}

// botItem is the attribute of a bot's item that authentication reads.
type botItem struct {
	store.Key
	Active bool `dynamodbav:"active"`
}

func (f *fixture) seed(t *testing.T, v any) {
	t.Helper()
	if err := f.db.Seed(v); err != nil {
		t.Fatal(err)
	}
}

// restrict gives the account an api restriction (enforced or not) that allows only 10.0.0.0/8,
// as a new version.
func (f *fixture) restrict(t *testing.T, enforced bool) {
	t.Helper()
	s := &iprestrict.State{
		Restrictions: []iprestrict.Restriction{{ID: "ipx_1", Enforced: enforced, PolicyIDs: []string{"ipp_1"}}},
		Policies:     map[string][]iprestrict.Rule{"ipp_1": {{Prefix: netip.MustParsePrefix("10.0.0.0/8")}}},
	}
	var acct auth.AccountItem
	if err := f.a.DB.Get(context.Background(), store.AccountKey(f.account), &acct); err != nil {
		t.Fatal(err)
	}
	acct.Restriction++
	f.seed(t, iprestrict.Item{Key: iprestrict.ItemKey(f.account, acct.Restriction), IPX: s.Encode()})
	f.seed(t, acct)
}

// revoke deactivates the key's bot.
func (f *fixture) revoke(t *testing.T) {
	t.Helper()
	f.seed(t, botItem{Key: store.ResourceKey(f.account, principal), Active: false})
}

// deletePrincipal deletes the key's bot (its key stays).
func (f *fixture) deletePrincipal(t *testing.T) {
	t.Helper()
	k := store.ResourceKey(f.account, principal)
	if _, err := f.db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(f.a.DB.Table), Key: k.AV()}); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) deleteToken(t *testing.T) {
	t.Helper()
	k := store.TokenKey(store.TokenHash(f.token))
	if _, err := f.db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(f.a.DB.Table), Key: k.AV()}); err != nil {
		t.Fatal(err)
	}
}

// serve runs op as the handler of one request from source with the fixture's token, and
// returns the response and op's error.
func (f *fixture) serve(t *testing.T, source string, op func(ctx context.Context, r *api.Request) error) (*httptest.ResponseRecorder, error) {
	t.Helper()
	s := &api.Server{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Source: func(*http.Request) netip.Addr { return netip.MustParseAddr(source) }, Auth: f.a}
	var got error
	h := s.Handle(http.StatusOK, func(ctx context.Context, r *api.Request) (any, error) {
		if got = op(ctx, r); got != nil {
			return nil, got
		}
		return map[string]string{}, nil
	})
	req := httptest.NewRequest(http.MethodGet, "/test", nil)
	req.Header.Set("Authorization", "Bearer "+f.token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec, got
}

// read is what every read does: the token and account items fetched with the data, verified.
func (f *fixture) read(ctx context.Context, r *api.Request) error {
	s := auth.Of(r)
	if _, err := s.Resolve(ctx); err != nil {
		return err
	}
	items, err := f.a.DB.GetMany(ctx, s.ReadKeys()...)
	if err != nil {
		return err
	}
	return s.VerifyRead(ctx, items)
}

// commit is a write as package resource makes one: Refresh, the transaction built (fill returns
// an update of the account item, or nil), Guard, the commit, and Committed on its result.
func (f *fixture) commit(ctx context.Context, r *api.Request, fill func(tx *store.Tx) *expression.UpdateBuilder) error {
	s := auth.Of(r)
	if err := s.Refresh(ctx); err != nil {
		return err
	}
	tx := &store.Tx{}
	acctUpdate := fill(tx)
	if err := s.Guard(tx, acctUpdate); err != nil {
		return err
	}
	return s.Committed(f.a.DB.Commit(ctx, tx))
}

// write commits one item, retrying on auth.ErrRetry as the generic family's retry policy does;
// before attempt n it runs between[n] (a concurrent change). It returns the attempts made.
func (f *fixture) write(between map[int]func(), attempts *int) func(ctx context.Context, r *api.Request) error {
	return func(ctx context.Context, r *api.Request) error {
		if _, err := auth.Of(r).Resolve(ctx); err != nil {
			return err
		}
		var err error
		for *attempts = 1; *attempts <= 5; *attempts++ {
			err = f.commit(ctx, r, func(tx *store.Tx) *expression.UpdateBuilder {
				if change := between[*attempts]; change != nil {
					change()
				}
				tx.Put("item", store.Key{PK: "A#" + f.account, SK: "ITEM"}, store.Absent())
				return nil
			})
			if !errors.Is(err, auth.ErrRetry) {
				return err
			}
		}
		return err
	}
}

func TestOutcomes(t *testing.T) {
	cases := []struct {
		name string
		// setup prepares the table (and the authenticator's hints) before the request.
		setup func(t *testing.T, f *fixture)
		// write makes the request a write; between scripts concurrent changes before attempts.
		write   bool
		between func(t *testing.T, f *fixture) map[int]func()
		source  string
		// want is the error (nil: success) and the response status; attempts the commits made.
		want     error
		code     string
		status   int
		attempts int
		warned   bool
	}{
		{name: "unknown token", setup: func(t *testing.T, f *fixture) { f.deleteToken(t) }, want: auth.ErrUnknownKey, status: 403},
		{name: "unknown token write", setup: func(t *testing.T, f *fixture) { f.deleteToken(t) }, write: true, want: auth.ErrUnknownKey, status: 403},
		{name: "authtoken used as key", setup: func(t *testing.T, f *fixture) {
			f.seed(t, auth.TokenItem{Key: store.TokenKey(store.TokenHash(f.token)), Kind: auth.KindCredential, AccountID: f.account, PrincipalID: principal})
		}, want: auth.ErrAuthtokenAsKey, status: 403},
		{name: "valid read", status: 200},
		{name: "valid write", write: true, status: 200, attempts: 1},
		{name: "revoked principal read", setup: func(t *testing.T, f *fixture) { f.revoke(t) }, want: auth.ErrUnknownKey, status: 403},
		// A write that did not read conditions on the bot's item being active.
		{name: "revoked principal write", setup: func(t *testing.T, f *fixture) { f.revoke(t) }, write: true, want: auth.ErrUnknownKey, status: 403, attempts: 1},
		{name: "deleted principal read", setup: func(t *testing.T, f *fixture) { f.deletePrincipal(t) }, want: auth.ErrUnknownKey, status: 403},
		{name: "deleted principal write", setup: func(t *testing.T, f *fixture) { f.deletePrincipal(t) }, write: true, want: auth.ErrUnknownKey, status: 403, attempts: 1},
		// The token's identity is remembered between requests; its deletion is still seen.
		{name: "deleted token read", setup: func(t *testing.T, f *fixture) { f.warm(t); f.deleteToken(t) }, want: auth.ErrUnknownKey, status: 403},
		{name: "deleted token write", setup: func(t *testing.T, f *fixture) { f.warm(t); f.deleteToken(t) }, write: true, want: auth.ErrUnknownKey, status: 403, attempts: 1},
		{name: "account guard changed once", write: true, source: allowed, status: 200, attempts: 2,
			between: func(t *testing.T, f *fixture) map[int]func() {
				return map[int]func(){1: func() { f.restrict(t, true) }}
			}},
		{name: "account guard changed twice", write: true, source: allowed, status: 200, attempts: 3,
			between: func(t *testing.T, f *fixture) map[int]func() {
				return map[int]func(){1: func() { f.restrict(t, true) }, 2: func() { f.restrict(t, true) }}
			}},
		{name: "principal revoked between read and commit", write: true, want: auth.ErrUnknownKey, status: 403, attempts: 1,
			between: func(t *testing.T, f *fixture) map[int]func() { return map[int]func(){1: func() { f.revoke(t) }} }},
		{name: "account guard changed to refuse the source", write: true, source: refused, code: api.CodeIPRestricted, status: 403, attempts: 2,
			between: func(t *testing.T, f *fixture) map[int]func() {
				return map[int]func(){1: func() { f.restrict(t, true) }}
			}},
		{name: "ip restriction allows", setup: func(t *testing.T, f *fixture) { f.restrict(t, true) }, source: allowed, status: 200},
		{name: "ip restriction denies", setup: func(t *testing.T, f *fixture) { f.restrict(t, true) }, source: refused, code: api.CodeIPRestricted, status: 403},
		// A write that has not read the account item assumes no restriction; the guard sees one.
		{name: "ip restriction allows write", setup: func(t *testing.T, f *fixture) { f.restrict(t, true) }, write: true, source: allowed, status: 200, attempts: 2},
		{name: "ip restriction denies write", setup: func(t *testing.T, f *fixture) { f.restrict(t, true) }, write: true, source: refused, code: api.CodeIPRestricted, status: 403, attempts: 2},
		{name: "ip restriction warns", setup: func(t *testing.T, f *fixture) { f.restrict(t, false) }, source: refused, status: 200, warned: true},
		{name: "ip restriction warns write", setup: func(t *testing.T, f *fixture) { f.restrict(t, false) }, write: true, source: refused, status: 200, attempts: 2, warned: true},
		// The account names a version whose item is gone: the operation must be built again.
		{name: "restriction version gone", setup: func(t *testing.T, f *fixture) {
			f.seed(t, auth.AccountItem{Key: store.AccountKey(f.account), ID: f.account, Restriction: 99})
		}, want: auth.ErrRetry, status: 429},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			if c.setup != nil {
				c.setup(t, f)
			}
			lim := &scriptedLimiter{}
			f.a.Limiter = lim
			source := c.source
			if source == "" {
				source = allowed
			}
			op := f.read
			attempts := 0
			if c.write {
				var between map[int]func()
				if c.between != nil {
					between = c.between(t, f)
				}
				op = f.write(between, &attempts)
			}
			res, got := f.serve(t, source, op)
			switch {
			case c.want != nil:
				if !errors.Is(got, c.want) {
					t.Fatalf("error %v, want %v", got, c.want)
				}
			case c.code != "":
				if e, ok := api.AsError(got); !ok || e.Code != c.code {
					t.Fatalf("error %v, want %s", got, c.code)
				}
			case got != nil:
				t.Fatalf("error %v, want success", got)
			}
			if res.Code != c.status {
				t.Fatalf("status %d, want %d: %s", res.Code, c.status, res.Body)
			}
			if c.write && attempts != c.attempts {
				t.Fatalf("%d commit attempts, want %d", attempts, c.attempts)
			}
			written := f.db.Item("A#"+f.account, "ITEM") != nil
			if written != (c.write && c.status == 200) {
				t.Fatalf("item written: %v", written)
			}
			w := res.Header().Get(iprestrict.WarningHeader)
			if c.warned != (w != "") || c.warned && !strings.Contains(w, source) {
				t.Fatalf("warning header %q", w)
			}
			// Only a verified caller spends its account's budget: a refused one's count is
			// given back (its token named the account, so it was counted).
			if want := c.status == 403 && len(lim.counted) > 0; (lim.released > 0) != want || lim.released > 1 {
				t.Fatalf("count released %d times (counted %v), want %v", lim.released, lim.counted, want)
			}
			if lim.released > 0 && res.Header().Get("RateLimit") != "" {
				t.Fatalf("a released request carries RateLimit %q", res.Header().Get("RateLimit"))
			}
		})
	}
}

// warm makes one successful request, so the token's identity is remembered.
func (f *fixture) warm(t *testing.T) {
	t.Helper()
	if _, err := f.serve(t, allowed, f.read); err != nil {
		t.Fatal(err)
	}
}

// A warm read is one round trip whatever the restriction; its version's rules are read once
// per process and version.
func TestRoundTrips(t *testing.T) {
	f := newFixture(t)
	f.restrict(t, true)
	f.warm(t)
	before := len(f.db.Calls())
	for i := 0; i < 3; i++ {
		if _, err := f.serve(t, allowed, f.read); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(f.db.Calls()) - before; n != 3 {
		t.Fatalf("3 warm reads made %d calls, want 3", n)
	}
	f.restrict(t, true)
	before = len(f.db.Calls())
	f.warm(t)
	f.warm(t)
	if n := len(f.db.Calls()) - before; n != 3 {
		t.Fatalf("2 reads after a change made %d calls, want 3 (the new version read once)", n)
	}
}

// A write that updates the account item carries the guard as that update's condition.
func TestCommitUpdatesAccountUnderGuard(t *testing.T) {
	f := newFixture(t)
	attempts := 0
	_, err := f.serve(t, allowed, func(ctx context.Context, r *api.Request) error {
		if err := f.read(ctx, r); err != nil {
			return err
		}
		return f.commit(ctx, r, func(tx *store.Tx) *expression.UpdateBuilder {
			attempts++
			upd := expression.Set(expression.Name("created"), expression.Value(7))
			return &upd
		})
	})
	if err != nil || attempts != 1 {
		t.Fatalf("commit: %v after %d attempts", err, attempts)
	}
	var acct auth.AccountItem
	if err := f.a.DB.Get(context.Background(), store.AccountKey(f.account), &acct); err != nil || acct.Created != 7 {
		t.Fatalf("account item %+v, %v", acct, err)
	}
	// With the account changed since the read, the update is not applied.
	f.restrict(t, true)
	_, err = f.serve(t, allowed, func(ctx context.Context, r *api.Request) error {
		if err := f.read(ctx, r); err != nil {
			return err
		}
		f.restrict(t, true)
		return f.commit(ctx, r, func(tx *store.Tx) *expression.UpdateBuilder {
			upd := expression.Set(expression.Name("created"), expression.Value(8))
			return &upd
		})
	})
	if !errors.Is(err, auth.ErrRetry) {
		t.Fatalf("commit after a change: %v, want ErrRetry", err)
	}
	if err := f.a.DB.Get(context.Background(), store.AccountKey(f.account), &acct); err != nil || acct.Created != 7 {
		t.Fatalf("account item changed by a refused commit: %+v, %v", acct, err)
	}
}

// scriptedLimiter decides every request as told and records the accounts it counted and the
// counts given back.
type scriptedLimiter struct {
	refuse   bool
	counted  []string
	released int
}

func (l *scriptedLimiter) Start(_ context.Context, account string) auth.Admission {
	l.counted = append(l.counted, account)
	return &scriptedAdmission{l: l}
}

type scriptedAdmission struct {
	l        *scriptedLimiter
	released bool
}

func (a *scriptedAdmission) Settle(h http.Header) *api.Error {
	if a.released {
		return nil
	}
	h.Set("RateLimit", `"default";r=0;t=5`)
	if !a.l.refuse {
		return nil
	}
	return &api.Error{Status: http.StatusTooManyRequests, Code: api.CodeRateLimited, Msg: "limited"}
}

func (a *scriptedAdmission) Release(h http.Header) {
	if a.released || a.l.refuse {
		return
	}
	a.released = true
	a.l.released++
	h.Del("RateLimit")
}

// Every request whose token names an account is counted once, however often it resolves its
// caller; a refused one releases nothing it read and commits nothing, and answers 429 even when
// the handler failed otherwise. Requests that name no account are not counted.
func TestLimiterGates(t *testing.T) {
	cases := []struct {
		name    string
		refuse  bool
		write   bool
		unknown bool
		// fail: the handler resolves the caller, then fails with a 400 without reading.
		fail   bool
		status int
	}{
		{name: "admitted read", status: 200},
		{name: "admitted write", write: true, status: 200},
		{name: "refused read", refuse: true, status: 429},
		{name: "refused write", refuse: true, write: true, status: 429},
		{name: "refused request that failed anyway", refuse: true, fail: true, status: 429},
		{name: "admitted request that failed", fail: true, status: 400},
		{name: "unknown token", unknown: true, refuse: true, status: 403},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			lim := &scriptedLimiter{refuse: c.refuse}
			f.a.Limiter = lim
			if c.unknown {
				f.deleteToken(t)
			}
			attempts := 0
			res, _ := f.serve(t, allowed, func(ctx context.Context, r *api.Request) error {
				if c.fail {
					if _, err := auth.Of(r).Resolve(ctx); err != nil {
						return err
					}
					return api.Invalid("x", "bad x")
				}
				if c.write {
					return f.write(nil, &attempts)(ctx, r)
				}
				if err := f.read(ctx, r); err != nil {
					return err
				}
				_, err := auth.Of(r).Resolve(ctx) // resolving again counts nothing more
				return err
			})
			if res.Code != c.status {
				t.Fatalf("status %d, want %d: %s", res.Code, c.status, res.Body)
			}
			wantCounted := []string{f.account}
			if c.unknown {
				wantCounted = nil
			}
			if fmt.Sprint(lim.counted) != fmt.Sprint(wantCounted) {
				t.Fatalf("counted %v, want %v", lim.counted, wantCounted)
			}
			if (res.Header().Get("RateLimit") != "") == c.unknown {
				t.Fatalf("RateLimit field %q", res.Header().Get("RateLimit"))
			}
			if c.write && (f.db.Count(fakedb.OpTransactWriteItems) > 0) == c.refuse {
				t.Fatalf("%d transactions", f.db.Count(fakedb.OpTransactWriteItems))
			}
			if c.status == 429 && !strings.Contains(res.Body.String(), api.CodeRateLimited) {
				t.Fatalf("body %s", res.Body)
			}
		})
	}
}

// A request the server did not make a session for (its api.Server has no Authenticator, or a
// worker's api.RequestAs with a fixed caller) resolves no caller through Of: nothing is read,
// verified or written in its name, and its fixed caller is never taken as verified.
func TestRequestWithoutSessionIsRefused(t *testing.T) {
	f := newFixture(t)
	for name, r := range map[string]*api.Request{
		"no authenticator": {HTTP: httptest.NewRequest(http.MethodGet, "/test", nil), Token: f.token},
		"fixed caller": api.RequestAs(httptest.NewRequest(http.MethodGet, "/test", nil),
			api.Caller{AccountID: f.account, PrincipalID: principal, TokenHash: store.TokenHash(f.token)}),
	} {
		before := len(f.db.Calls())
		s := auth.Of(r)
		if c, err := s.Resolve(context.Background()); err == nil {
			t.Errorf("%s: resolved %+v", name, c)
		}
		if s.Verified() || len(s.ReadKeys()) != 0 {
			t.Errorf("%s: verified %v, read keys %v", name, s.Verified(), s.ReadKeys())
		}
		if n := len(f.db.Calls()) - before; n != 0 {
			t.Errorf("%s: %d table calls", name, n)
		}
	}
}
