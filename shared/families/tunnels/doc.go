// Package tunnels is the tunnel session and tunnel families (/tunnel_sessions, /tunnels): what
// a tunnel server (frp's frps, through its HTTP plugin, package frpplugin) reported and this API
// admitted, listed and read in the platform's shapes. Nothing of them is created through the
// API: a session exists because an agent logged in, a tunnel because it opened a proxy, and
// both end when the server says so, when their lease lapses (the scheduler's sweep) or at the
// session's next heartbeat after stop, restart, deletion of its credential or suspension of its
// account. Stop and restart change the session's state, which the next heartbeat enacts;
// update answers 400 ERR_NGROK_806, as frp agents cannot update themselves.
//
// A session and a tunnel as stored and shown, how a session ends and the sweep of lapsed leases
// are package lease, which the scheduler links without the families' rules.
//
// The tunnel-server keys that authenticate the plugin's callers are here too (ServerKeyItem),
// minted and revoked by the operator.
package tunnels
