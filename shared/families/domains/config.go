package domains

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// Defaults of the configuration (see Config and the README's configuration table).
const (
	DefaultBaseDomain = "tunnels.example.com"
	DefaultRegions    = "us,eu,ap,au,sa,jp,in"
	// The default address pool of a region r is one host, tcp.<r>.<base domain>, with these ports.
	DefaultPoolLow, DefaultPoolHigh = 10000, 19999
)

// ConfigVars are the environment variables FromEnv reads; empty ones take their defaults.
var ConfigVars = []string{"BASE_DOMAIN", "DNS_ZONE", "NAME_SERVERS", "REGIONS", "ADDR_POOLS"}

// Config is what a deployment says about its domains and addresses. It is read from the
// environment once per process (FromEnv); tests build their own.
type Config struct {
	// BaseDomain is the deployment's own domain (BASE_DOMAIN): names under it need no CNAME.
	BaseDomain string
	// DNSZone is the service's DNS zone (DNS_ZONE, default dns.<BaseDomain>): custom domains are
	// CNAMEs to names in it, and their ACME challenges are delegated to it.
	DNSZone string
	// NameServers are the DNS zone's name servers (NAME_SERVERS, comma-separated, default
	// ns1.<DNSZone>,ns2.<DNSZone>): agent ingress domains are delegated to them.
	NameServers []string
	// Regions are the region codes a client may name, the first being the default (REGIONS).
	Regions []string
	// AddrPools are the TCP addresses each region hands out (ADDR_POOLS); a region without a
	// pool has none to give.
	AddrPools map[string]Pool
}

// Pool is the addresses of one region: every port of Low..High on every host.
type Pool struct {
	Hosts     []string
	Low, High int
}

// Size is the number of addresses in the pool.
func (p Pool) Size() int { return len(p.Hosts) * (p.High - p.Low + 1) }

// Addr is the pool's address number i (0 ≤ i < Size), host by host.
func (p Pool) Addr(i int) string {
	ports := p.High - p.Low + 1
	return p.Hosts[i/ports] + ":" + strconv.Itoa(p.Low+i%ports)
}

// DefaultRegion is the region of a reservation that names none.
func (c *Config) DefaultRegion() string { return c.Regions[0] }

// FromEnv reads the configuration from the environment, with the documented defaults for
// variables that are unset or empty.
func FromEnv() (*Config, error) {
	return Parse(os.Getenv)
}

// Parse reads the configuration through getenv (os.Getenv in a deployment).
func Parse(getenv func(string) string) (*Config, error) {
	env := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	c := &Config{BaseDomain: strings.ToLower(env("BASE_DOMAIN", DefaultBaseDomain)), AddrPools: map[string]Pool{}}
	if !validHostname(c.BaseDomain) {
		return nil, fmt.Errorf("BASE_DOMAIN %q is not a domain name", c.BaseDomain)
	}
	c.DNSZone = strings.ToLower(env("DNS_ZONE", "dns."+c.BaseDomain))
	if !validHostname(c.DNSZone) {
		return nil, fmt.Errorf("DNS_ZONE %q is not a domain name", c.DNSZone)
	}
	for _, ns := range strings.Split(env("NAME_SERVERS", "ns1."+c.DNSZone+",ns2."+c.DNSZone), ",") {
		ns = strings.ToLower(strings.TrimSpace(ns))
		if !validHostname(ns) {
			return nil, fmt.Errorf("NAME_SERVERS: %q is not a host name", ns)
		}
		c.NameServers = append(c.NameServers, ns)
	}
	for _, r := range strings.Split(env("REGIONS", DefaultRegions), ",") {
		r = strings.TrimSpace(r)
		if !validLabel(r) {
			return nil, fmt.Errorf("REGIONS: %q is not a region code (lowercase letters, digits and '-')", r)
		}
		if slices.Contains(c.Regions, r) {
			return nil, fmt.Errorf("REGIONS: %q is listed twice", r)
		}
		c.Regions = append(c.Regions, r)
	}
	pools := getenv("ADDR_POOLS")
	if strings.TrimSpace(pools) == "" {
		for _, r := range c.Regions {
			c.AddrPools[r] = Pool{Hosts: []string{"tcp." + r + "." + c.BaseDomain}, Low: DefaultPoolLow, High: DefaultPoolHigh}
		}
		return c, nil
	}
	for _, spec := range strings.Split(pools, ";") {
		if strings.TrimSpace(spec) == "" {
			continue
		}
		region, p, err := parsePool(spec)
		if err != nil {
			return nil, fmt.Errorf("ADDR_POOLS: %w", err)
		}
		if !slices.Contains(c.Regions, region) {
			return nil, fmt.Errorf("ADDR_POOLS: region %q is not one of REGIONS (%s)", region, strings.Join(c.Regions, ", "))
		}
		if _, dup := c.AddrPools[region]; dup {
			return nil, fmt.Errorf("ADDR_POOLS: region %q has two pools", region)
		}
		for other, q := range c.AddrPools {
			if overlap(p, q) {
				return nil, fmt.Errorf("ADDR_POOLS: the pools of %s and %s share addresses", region, other)
			}
		}
		c.AddrPools[region] = p
	}
	return c, nil
}

// parsePool reads "<region>=<host>[,<host>…]:<low>-<high>".
func parsePool(spec string) (string, Pool, error) {
	region, rest, ok := strings.Cut(strings.TrimSpace(spec), "=")
	hosts, ports, ok2 := strings.Cut(rest, ":")
	low, high, ok3 := strings.Cut(ports, "-")
	if !ok || !ok2 || !ok3 {
		return "", Pool{}, fmt.Errorf("%q is not <region>=<host>[,<host>…]:<low>-<high>", spec)
	}
	var p Pool
	var err error
	if p.Low, err = strconv.Atoi(low); err == nil {
		p.High, err = strconv.Atoi(high)
	}
	if err != nil || p.Low < 1 || p.High > 65535 || p.Low > p.High {
		return "", Pool{}, fmt.Errorf("%q: the port range must be <low>-<high> within 1-65535", spec)
	}
	for _, h := range strings.Split(hosts, ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if !validHostname(h) {
			return "", Pool{}, fmt.Errorf("%q: %q is not a host name", spec, h)
		}
		if slices.Contains(p.Hosts, h) {
			return "", Pool{}, fmt.Errorf("%q: host %q is listed twice", spec, h)
		}
		p.Hosts = append(p.Hosts, h)
	}
	return strings.TrimSpace(region), p, nil
}

// overlap reports whether two pools share an address.
func overlap(p, q Pool) bool {
	for _, h := range p.Hosts {
		if slices.Contains(q.Hosts, h) && p.Low <= q.High && q.Low <= p.High {
			return true
		}
	}
	return false
}

// validLabel reports whether s is one DNS label of lowercase letters, digits and inner '-'.
func validLabel(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// validHostname reports whether s is a lowercase domain name of at least two labels.
func validHostname(s string) bool {
	labels := strings.Split(s, ".")
	if len(s) > 253 || len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if !validLabel(l) {
			return false
		}
	}
	return true
}

// mustConfig reads the configuration when a family's routes are registered (once per process
// in a deployment); an invalid one fails the start, naming the variable, rather than letting
// requests be answered wrongly.
func mustConfig() *Config {
	c, err := FromEnv()
	if err != nil {
		panic("domains: configuration: " + err.Error())
	}
	return c
}

// configuredHooks is the shape of a hooks type that holds its family and the configuration
// (struct{ *resource.Family[T, P]; Config *Config }).
type configuredHooks[T any, P interface {
	*T
	store.Resource
}] interface {
	~struct {
		*resource.Family[T, P]
		Config *Config
	}
	resource.Hooks[P]
}

// configured is the hooks constructor (resource.Serve) of a family whose hooks H hold the
// configuration as well as their family.
func configured[H configuredHooks[T, P], T any, P interface {
	*T
	store.Resource
}](f *resource.Family[T, P]) H {
	return H(struct {
		*resource.Family[T, P]
		Config *Config
	}{f, mustConfig()})
}
