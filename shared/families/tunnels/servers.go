package tunnels

import (
	"regexp"
	"strings"

	"tunnelapi/shared/platform/store"
)

// KindTunnelServer is the kind of the token item of a tunnel-server key's secret: it
// authenticates a tunnel server to the plugin, and nothing else (the API's authentication takes
// only API keys).
const KindTunnelServer = "tunnel_server"

// ServerKeyItem is a tunnel-server key as the operator lists it: the server's name and region,
// and the hash of its secret, whose token item (ServerTokenItem) the plugin reads.
type ServerKeyItem struct {
	store.Key
	ID        string `dynamodbav:"id"`
	Name      string `dynamodbav:"name"`
	Region    string `dynamodbav:"region"`
	CreatedAt int64  `dynamodbav:"created"`
	TokenHash string `dynamodbav:"token_hash"`
}

// ServerTokenItem maps the hash of a tunnel-server key's secret to the key (store.TokenKey).
type ServerTokenItem struct {
	store.Key
	Kind   string `dynamodbav:"kind"`
	ID     string `dynamodbav:"rid"`
	Name   string `dynamodbav:"name"`
	Region string `dynamodbav:"region"`
}

// serverName is a server's name: lowercase letters, digits and '-', not starting or ending
// with '-'.
var serverName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// ValidServerName reports whether name may name a tunnel server.
func ValidServerName(name string) bool { return serverName.MatchString(name) }

// ServerUser is the Basic-auth user name of the server name in region: "<name>.<region>".
func ServerUser(name, region string) string { return name + "." + region }

// ParseServerUser splits a Basic-auth user name into the server's name and region.
func ParseServerUser(user string) (name, region string, ok bool) {
	name, region, ok = strings.Cut(user, ".")
	return name, region, ok && ValidServerName(name) && region != "" && !strings.Contains(region, ".")
}
