package frpplugin

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/netip"
	"strconv"
	"time"

	"tunnelapi/shared/families/access"
	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/families/tunnels"
	"tunnelapi/shared/families/tunnels/lease"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/iprestrict"
	"tunnelapi/shared/platform/store"
)

// The members of frpc's metadatas the plugin reads and writes. The agent sends its credential's
// token as MetaAuthtoken; the login's rewrite replaces it by the credential's id and adds
// MetaAccount, so that later requests name their items without the secret, and MetaGeneration,
// the connection's generation (lease.SessionItem.Generation). MetaMetadata is the session's
// metadata.
const (
	MetaAuthtoken  = "authtoken"
	MetaAccount    = "account_id"
	MetaGeneration = "session_generation"
	MetaMetadata   = "metadata"
)

// loginContent is what the plugin reads of a Login's content (frp's LoginContent).
type loginContent struct {
	Version       string            `json:"version"`
	Hostname      string            `json:"hostname"`
	OS            string            `json:"os"`
	RunID         string            `json:"run_id"`
	Metas         map[string]string `json:"metas"`
	ClientAddress string            `json:"client_address"`
}

// errContent is the 400 for a content that is not the operation's.
func errContent(op string) error {
	return api.BadRequest(api.CodeUnparseableBody, "content", "content is not the content of frp's %s request", op)
}

// login admits an agent: its authtoken names an active tunnel credential of an account that is
// neither suspended nor refusing the agent's address; a reconnect with the id of its live
// session continues that session, any other login starts one.
func (p *Plugin) login(ctx context.Context, r *api.Request, s server, raw json.RawMessage) (Response, error) {
	var in loginContent
	if err := json.Unmarshal(raw, &in); err != nil {
		return Response{}, errContent(OpLogin)
	}
	authtoken := in.Metas[MetaAuthtoken]
	keys := []store.Key{s.key()}
	if authtoken != "" {
		keys = append(keys, store.TokenKey(store.TokenHash(authtoken)))
	}
	items, err := p.DB.GetMany(ctx, keys...)
	if unreachable(err) {
		return errStore("the login"), nil
	} else if err != nil {
		return Response{}, err
	}
	key, err := s.verify(items[0])
	if err != nil {
		return Response{}, err
	}
	if authtoken == "" {
		return refuse("no authtoken: set metadatas.authtoken in frpc's configuration to the token of a tunnel credential (POST /credentials)"), nil
	}
	var tok auth.TokenItem
	if items[1] != nil {
		if err := store.Unmarshal(items[1], &tok); err != nil {
			return Response{}, err
		}
	}
	if tok.Kind != auth.KindCredential {
		return refuse("the authtoken in metadatas.authtoken is not the token of a tunnel credential: it is unknown, or its credential was deleted"), nil
	}
	a, err := p.loginState(ctx, tok, in.RunID)
	if unreachable(err) {
		return errStore("the login"), nil
	} else if err != nil {
		return Response{}, err
	}
	if why := a.refusal(tok, in.ClientAddress); why != "" {
		return refuse("%s", why), nil
	}
	now := time.Now()
	id, gen := "", int64(1)
	switch {
	case a.session != nil && a.session.State == lease.StateLive && a.session.CredentialID == tok.ResourceID && a.session.Revoked == "":
		// A reconnect: the session goes on, on a new connection.
		id = a.session.ID
		if gen, err = tunnels.Reconnect(ctx, p.DB, a.session, now, p.lease()); unreachable(err) {
			return errStore("the login"), nil
		} else if store.IsNotFound(err) {
			return gone(id), nil
		} else if err != nil {
			return Response{}, err
		}
	case a.session != nil && a.session.State == lease.StateStopped, a.ended == lease.StateStopped:
		return refuse("tunnel session %s was stopped through the API: start frpc again to open a new session", in.RunID), nil
	default:
		// A session asked to restart, or revoked before its account was resumed, ends here: the
		// agent goes on as a new one.
		if a.session != nil && (a.session.State == lease.StateRestarting || a.session.Revoked != "") {
			if err := lease.End(ctx, p.DB, a.session, lease.StateRestarting, now); err != nil && err != lease.ErrChanged {
				return Response{}, err
			}
		}
		it := &lease.SessionItem{AgentVersion: in.Version, CredentialID: tok.ResourceID, IP: hostOf(in.ClientAddress),
			Metadata: in.Metas[MetaMetadata], OS: in.OS, Hostname: in.Hostname, Region: key.Region, ServerID: key.ID, KeyHash: s.secretHash, ServerName: key.Name,
			Behalf: audit.OnBehalf{PrincipalID: tok.PrincipalID, Subject: tok.Subject, CredentialID: tok.ResourceID, BaseURL: r.BaseURL()}}
		id = ids.NewAt(ids.TunnelSession, now.UTC())
		it.Meta = store.Meta{Key: lease.SessionKey(tok.AccountID, id), ID: id, AccountID: tok.AccountID, CreatedAt: now.Unix(), Version: 1}
		if err := tunnels.Start(ctx, p.DB, it, p.lease()); unreachable(err) {
			return errStore("the login"), nil
		} else if errors.Is(err, tunnels.ErrRevoked) {
			return refuse("the authtoken's tunnel credential was deleted, its account suspended or the tunnel server's key revoked while the login was checked"), nil
		} else if err != nil {
			return Response{}, err
		}
	}
	return rewriteLogin(raw, in.Metas, id, gen, tok)
}

// rewriteLogin is the admission of a login rewritten: run_id set to the session's id, and the
// metas' authtoken replaced by the credential's id beside the account's and the connection's
// generation.
func rewriteLogin(raw json.RawMessage, metas map[string]string, session string, gen int64, tok auth.TokenItem) (Response, error) {
	var content map[string]json.RawMessage
	if err := json.Unmarshal(raw, &content); err != nil {
		return Response{}, errContent(OpLogin)
	}
	m := maps.Clone(metas)
	m[MetaAuthtoken] = tok.ResourceID
	m[MetaAccount] = tok.AccountID
	m[MetaGeneration] = strconv.FormatInt(gen, 10)
	var err error
	if content["run_id"], err = json.Marshal(session); err != nil {
		return Response{}, err
	}
	if content["metas"], err = json.Marshal(m); err != nil {
		return Response{}, err
	}
	return Response{Content: content}, nil
}

// loginState is what a login is decided on, beyond the credential's token.
type loginState struct {
	credential, account, owner store.Item
	ownerRead                  bool
	session                    *lease.SessionItem
	// ended is the state of the session's ended mark ("" for none).
	ended string
	// agentTables are the account's enforced agent IP restrictions, by id.
	agentTables map[string]*iprestrict.Table
}

// loginState reads, in one round trip and with the account's agent IP restrictions beside it,
// the credential, the account, the credential's owner when it can be deactivated, and the
// session runID names and its ended mark when it names one.
func (p *Plugin) loginState(ctx context.Context, tok auth.TokenItem, runID string) (*loginState, error) {
	acct := tok.AccountID
	keys := []store.Key{store.ResourceKey(acct, tok.ResourceID), store.AccountKey(acct)}
	owner := ids.Is(tok.PrincipalID, ids.BotUser) || ids.Is(tok.PrincipalID, ids.ServiceUser)
	if owner {
		keys = append(keys, store.ResourceKey(acct, tok.PrincipalID))
	}
	run := ids.Is(runID, ids.TunnelSession)
	if run {
		keys = append(keys, lease.SessionKey(acct, runID), store.EndedSessionKey(acct, runID))
	}
	type tables struct {
		t   map[string]*iprestrict.Table
		err error
	}
	ch := make(chan tables, 1)
	go func() {
		t, err := p.agentRestrictions(ctx, acct)
		ch <- tables{t, err}
	}()
	items, err := p.DB.GetMany(ctx, keys...)
	t := <-ch
	if err != nil {
		return nil, err
	}
	if t.err != nil {
		return nil, t.err
	}
	a := &loginState{credential: items[0], account: items[1], ownerRead: owner, agentTables: t.t}
	rest := items[2:]
	if owner {
		a.owner, rest = rest[0], rest[1:]
	}
	if run {
		if rest[0] != nil {
			a.session = &lease.SessionItem{}
			if err := store.Unmarshal(rest[0], a.session); err != nil {
				return nil, err
			}
		}
		if rest[1] != nil {
			var e lease.EndedItem
			if err := store.Unmarshal(rest[1], &e); err != nil {
				return nil, err
			}
			a.ended = e.State
		}
	}
	return a, nil
}

// refusal is why the login of tok's agent from address must be refused, "" when it may go on.
func (a *loginState) refusal(tok auth.TokenItem, address string) string {
	if a.credential == nil {
		return "the authtoken's tunnel credential was deleted"
	}
	var acct auth.AccountItem
	if a.account == nil || store.Unmarshal(a.account, &acct) != nil || acct.Status == auth.StatusDeleting {
		return "the credential's account does not exist or is being deleted"
	}
	if acct.Status == auth.StatusSuspended {
		return "the credential's account is suspended: its agents are refused until the operator resumes it"
	}
	if a.ownerRead {
		var o principals.BotUserItem
		if a.owner == nil || store.Unmarshal(a.owner, &o) != nil || !o.Active {
			return "the credential's owner " + tok.PrincipalID + " is deactivated or deleted"
		}
	}
	if len(a.agentTables) == 0 {
		return ""
	}
	addr, ok := parseAddr(address)
	for _, id := range sortedKeys(a.agentTables) {
		if !ok || a.agentTables[id].Lookup(addr) != iprestrict.Allow {
			return "the agent's address " + hostOf(address) + " is not allowed by the account's agent IP restriction " + id + " (ERR_NGROK_115)"
		}
	}
	return ""
}

// agentRestrictions are the account's enforced IP restrictions of type agent, each as the table
// of its policies' rules, by id.
func (p *Plugin) agentRestrictions(ctx context.Context, account string) (map[string]*iprestrict.Table, error) {
	items, err := p.DB.QueryAll(ctx, store.Collection(account, ids.IPRestriction))
	if err != nil {
		return nil, err
	}
	var enforced []access.IPRestrictionItem
	for _, raw := range items {
		var x access.IPRestrictionItem
		if err := store.Unmarshal(raw, &x); err != nil {
			return nil, err
		}
		if x.Type == access.TypeAgent && x.Enforced {
			enforced = append(enforced, x)
		}
	}
	if len(enforced) == 0 {
		return nil, nil
	}
	raws, err := p.DB.QueryAll(ctx, store.Collection(account, ids.IPPolicyRule))
	if err != nil {
		return nil, err
	}
	byPolicy := map[string][]iprestrict.Rule{}
	for _, raw := range raws {
		var rule access.IPPolicyRuleItem
		if err := store.Unmarshal(raw, &rule); err != nil {
			return nil, err
		}
		prefix, err := netip.ParsePrefix(rule.CIDR)
		if err != nil {
			continue // validated when stored; an unreadable rule allows nothing
		}
		byPolicy[rule.PolicyID] = append(byPolicy[rule.PolicyID], iprestrict.Rule{Prefix: prefix, Deny: rule.Action == "deny"})
	}
	out := map[string]*iprestrict.Table{}
	for _, x := range enforced {
		var rules []iprestrict.Rule
		for _, pid := range x.PolicyIDs {
			rules = append(rules, byPolicy[pid]...)
		}
		out[x.ID] = iprestrict.NewTable(rules)
	}
	return out, nil
}

// parseAddr is the address of frps's client_address ("ip:port", or an ip alone).
func parseAddr(address string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(address); err == nil {
		return ap.Addr().Unmap(), true
	}
	a, err := netip.ParseAddr(address)
	return a.Unmap(), err == nil
}

// hostOf is the ip of frps's client_address, as the session's ip shows it.
func hostOf(address string) string {
	if a, ok := parseAddr(address); ok {
		return a.String()
	}
	return address
}
