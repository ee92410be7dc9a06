// Package frpplugin answers the HTTP server plugin of frp's tunnel server (frps v0.70.1): its
// Login, NewProxy, CloseProxy and Ping requests on POST /frp/plugin, each authenticated by a
// tunnel-server key (HTTP Basic: "<name>.<region>" and the key's secret, minted by the operator).
// Its answer is the rule frps obeys: a login is admitted for an active tunnel credential (its
// authtoken in frpc's metadatas.authtoken) of an account neither suspended nor refusing the
// agent's address, and rewritten so that the session's id (ts_…) is frps's run id and the
// secret is replaced by the credential's id; a proxy is admitted when the credential's ACL and
// the account's reservations allow its hosts or port, and recorded as a tunnel; a closed proxy
// ends its tunnel; a heartbeat renews the session's lease and carries stop and restart. Every
// refusal says why, and reaches frpc's log.
//
// A heartbeat is the cheapest request served: one consistent read of four small items, and a
// write only when less than half of the lease is left. When the store cannot be reached, a
// heartbeat of a session this API issued is admitted (an established tunnel never drops
// because the store blipped; revocations apply once it is back), while logins and proxies are
// refused with the reason.
package frpplugin
