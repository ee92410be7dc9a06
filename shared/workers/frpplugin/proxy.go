package frpplugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/families/tunnels"
	"tunnelapi/shared/families/tunnels/lease"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
)

// proxyContent is what the plugin reads of a NewProxy's content (frp's NewProxyContent).
type proxyContent struct {
	User          userInfo          `json:"user"`
	ProxyName     string            `json:"proxy_name"`
	ProxyType     string            `json:"proxy_type"`
	CustomDomains []string          `json:"custom_domains"`
	SubDomain     string            `json:"subdomain"`
	RemotePort    int               `json:"remote_port"`
	Metas         map[string]string `json:"metas"`
}

// MaxHosts bounds the hosts of one proxy (its custom domains and subdomain).
const MaxHosts = 10

// newProxy admits a proxy of a live session when the session's credential may bind what it
// asks for: each host (a custom domain reserved by the account, a subdomain of the base domain
// reserved by the account or by nobody) or TCP port (one of the account's reserved addresses),
// and its labels. The proxy is recorded as a tunnel.
func (p *Plugin) newProxy(ctx context.Context, r *api.Request, s server, raw []byte) (Response, error) {
	var in proxyContent
	if err := unmarshal(raw, &in); err != nil {
		return Response{}, errContent(OpNewProxy)
	}
	account, credential, session, ok := in.User.ids()
	if !ok {
		return p.notOurs(ctx, s)
	}
	for range 3 {
		res, err := p.openProxy(ctx, s, &in, account, credential, session)
		if unreachable(err) {
			return errStore("proxy " + in.ProxyName), nil
		}
		if !errors.Is(err, lease.ErrChanged) {
			return res, err
		}
	}
	return refuse("proxy %s: its session kept changing meanwhile; retry", in.ProxyName), nil
}

// openProxy is one attempt of newProxy.
func (p *Plugin) openProxy(ctx context.Context, s server, in *proxyContent, account, credential, session string) (Response, error) {
	a, err := p.read(ctx, s, account, credential, session)
	if err != nil {
		return Response{}, err
	}
	if a.session == nil {
		return gone(session), nil
	}
	if why, _ := a.ended(credential); why != "" {
		return refuse("proxy %s: %s", in.ProxyName, why), nil
	}
	if _, ok := a.session.Tunnels[in.ProxyName]; ok {
		// The agent reconnected: its tunnel goes on, now this connection's.
		if gen := in.User.generation(); gen > 0 {
			if err := tunnels.Adopt(ctx, p.DB, a.session, in.ProxyName, gen); err != nil {
				return Response{}, err
			}
		}
		return admit, nil
	}
	if len(a.session.Tunnels) >= lease.MaxTunnelsPerSession {
		return refuse("proxy %s: a tunnel session has at most %d proxies", in.ProxyName, lease.MaxTunnelsPerSession), nil
	}
	bind, why, err := p.binding(ctx, in, account, a)
	if err != nil {
		return Response{}, err
	}
	if why != "" {
		return refuse("proxy %s: %s", in.ProxyName, why), nil
	}
	now := time.Now()
	id := ids.NewAt(ids.Tunnel, now.UTC())
	t := &lease.TunnelItem{Meta: store.Meta{Key: store.ResourceKey(account, id), ID: id, AccountID: account, CreatedAt: now.Unix(), Version: 1},
		SessionID: session, ProxyName: in.ProxyName, PublicURL: bind, Proto: in.ProxyType, Region: a.session.Region,
		Labels: in.Metas, Generation: in.User.generation()}
	if err := tunnels.Open(ctx, p.DB, a.session, t); err != nil {
		return Response{}, err
	}
	return admit, nil
}

// binding checks what the proxy binds and returns its public URL, or why it may not.
func (p *Plugin) binding(ctx context.Context, in *proxyContent, account string, a *agentState) (url, why string, err error) {
	rules := a.credential.Matcher()
	// A proxy's labels are matched by the ACL when it restricts labels at all: its hosts or port
	// are what an ACL of bind rules on names restricts.
	if len(in.Metas) > 0 && slices.ContainsFunc(a.credential.ACL, isLabelRule) && !rules.AllowsLabels(in.Metas) {
		return "", "the credential's ACL does not allow binding the labels (metadatas) " + fmt.Sprint(in.Metas), nil
	}
	switch in.ProxyType {
	case "http", "https":
	case "tcp":
		return p.tcpBinding(ctx, in, account, a)
	default:
		return "", "proxy type " + api.Describe(in.ProxyType) + " is not served: use http, https or tcp (ERR_NGROK_332)", nil
	}
	var hosts []string
	for _, d := range in.CustomDomains {
		hosts = append(hosts, lower(d))
	}
	sub := ""
	if in.SubDomain != "" {
		sub = lower(in.SubDomain) + "." + p.Domains.BaseDomain
		hosts = append(hosts, sub)
	}
	if len(hosts) == 0 {
		return "", "an " + in.ProxyType + " proxy needs custom_domains or a subdomain", nil
	}
	if len(hosts) > MaxHosts {
		return "", fmt.Sprintf("a proxy binds at most %d hosts", MaxHosts), nil
	}
	for _, h := range hosts {
		if !rules.AllowsHostname(h) {
			return "", "the credential's ACL does not allow binding " + h, nil
		}
		res, err := domains.Lookup(ctx, p.DB, account, h, "")
		if err != nil {
			return "", "", err
		}
		switch {
		case res.Elsewhere:
			return "", h + " is reserved by another account", nil
		case res.Domain == "" && h != sub:
			return "", h + " is not a reserved domain of this account: reserve it first (POST /reserved_domains)", nil
		}
	}
	return in.ProxyType + "://" + hosts[0], "", nil
}

// isLabelRule reports whether an ACL rule binds labels (bind:key=value).
func isLabelRule(rule string) bool { return strings.Contains(rule, "=") }

// tcpBinding checks a TCP proxy's remote port: one of the account's reserved addresses, which
// the credential may bind.
func (p *Plugin) tcpBinding(ctx context.Context, in *proxyContent, account string, a *agentState) (url, why string, err error) {
	if in.RemotePort <= 0 {
		return "", "a tcp proxy needs remote_port: the port of one of the account's reserved addresses", nil
	}
	items, err := p.DB.QueryAll(ctx, store.Collection(account, ids.ReservedAddr))
	if err != nil {
		return "", "", err
	}
	var found []string
	for _, raw := range items {
		var ra domains.ReservedAddrItem
		if err := store.Unmarshal(raw, &ra); err != nil {
			return "", "", err
		}
		host, port, err := net.SplitHostPort(ra.Addr)
		if err != nil || port != strconv.Itoa(in.RemotePort) {
			continue
		}
		if ra.Region == a.session.Region {
			found = append([]string{host}, found...)
		} else {
			found = append(found, host)
		}
	}
	if len(found) == 0 {
		return "", fmt.Sprintf("remote_port %d is not the port of a reserved address of this account: reserve one first (POST /reserved_addrs)", in.RemotePort), nil
	}
	for _, host := range found {
		if a.credential.Matcher().AllowsAddr(host, in.RemotePort) {
			return "tcp://" + net.JoinHostPort(host, strconv.Itoa(in.RemotePort)), "", nil
		}
	}
	return "", fmt.Sprintf("the credential's ACL does not allow binding %s", net.JoinHostPort(strings.Join(found, "|"), strconv.Itoa(in.RemotePort))), nil
}
