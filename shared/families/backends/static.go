package backends

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// StaticItem is a stored static backend.
type StaticItem struct {
	store.Meta
	text
	leaf
	Address string `dynamodbav:"address"`
	TLS     bool   `dynamodbav:"tls"`
}

// StaticJSON is the wire form of a static backend.
type StaticJSON struct {
	resource.Head
	Address string  `json:"address"`
	TLS     TLSJSON `json:"tls"`
}

// TLSJSON is a static backend's TLS setting: whether the address is dialled with TLS.
type TLSJSON struct {
	Enabled bool `json:"enabled"`
}

type staticBody struct {
	api.Text
	Address *string  `json:"address"`
	TLS     *TLSJSON `json:"tls"`
}

// MaxAddressBytes bounds a static backend's address: the longest DNS name, a colon and a port.
const MaxAddressBytes = 253 + 6

// StaticBackendsDescriptor is the /backends/static family.
var StaticBackendsDescriptor = &resource.Descriptor{
	Path: "/backends/static", Prefix: ids.StaticBackend, ListKey: "backends", EventKind: "static_backend",
	Binding: func() resource.Binding { return resource.Bind(newBackends[StaticItem, *StaticItem, staticBody]) },
}

// StaticBackends is the static backend family's rules.
type StaticBackends = Backends[StaticItem, *StaticItem, staticBody]

func (it *StaticItem) wire(r *api.Request, h resource.Head) any {
	return StaticJSON{Head: h, Address: it.Address, TLS: TLSJSON{Enabled: it.TLS}}
}

// apply sets the address (required on create) and the TLS setting (off unless given).
func (it *StaticItem) apply(ctx context.Context, k *resource.Kit, r *api.Request, in *staticBody, m *resource.Mutation, create bool) error {
	if in.Address == nil && create {
		return api.BadRequest(CodeNotHostPort, "address", "address is required, in the form host:port")
	}
	if in.Address != nil {
		if err := checkAddress(*in.Address); err != nil {
			return err
		}
		it.Address = *in.Address
	}
	if in.TLS != nil {
		it.TLS = in.TLS.Enabled
	}
	return nil
}

// checkAddress checks a static backend's address: host:port (6505) with a host (6507) that is
// an IP address or a DNS name, and a port 1–65535 (6506).
func checkAddress(addr string) error {
	if len(addr) > MaxAddressBytes {
		return api.BadRequest(CodeBadAddress, "address", "address %s is %d bytes long; the limit is %d", api.Describe(addr), len(addr), MaxAddressBytes)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return api.BadRequest(CodeNotHostPort, "address", "address %s is not of the form host:port", api.Describe(addr))
	}
	if host == "" {
		return api.BadRequest(CodeNoHost, "address", "address %s has no host; use host:port", api.Describe(addr))
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port != strconv.Itoa(n) {
		return api.BadRequest(CodeBadAddress, "address", "address %s is invalid (port %s is not a number from 1 to 65535)", api.Describe(addr), api.Describe(port))
	}
	if reason := badHost(host, strings.HasPrefix(addr, "[")); reason != "" {
		return api.BadRequest(CodeBadAddress, "address", "address %s is invalid (%s)", api.Describe(addr), reason)
	}
	return nil
}

// badHost is why host is neither an IP address nor a DNS name, or "" when it is one; bracketed
// says the host was written in brackets, which only an IPv6 address may be.
func badHost(host string, bracketed bool) string {
	if ip, err := netip.ParseAddr(host); err == nil {
		if bracketed != ip.Is6() {
			return "only an IPv6 address is written in brackets, and it must be"
		}
		if ip.Zone() != "" {
			return "an address with a zone cannot be reached from outside its host"
		}
		return ""
	}
	if bracketed {
		return "only an IPv6 address is written in brackets"
	}
	for _, label := range strings.Split(strings.TrimSuffix(host, "."), ".") {
		switch {
		case label == "" || len(label) > 63:
			return "each label of the host name must be 1 to 63 characters"
		case label[0] == '-' || label[len(label)-1] == '-':
			return "a label of the host name may not start or end with '-'"
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "the host name may hold only letters, digits, '-', '_' and '.'"
			}
		}
	}
	return ""
}
