package config

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The default address pool of a region r is one host, tcp.<r>.<BASE_DOMAIN>, with these ports.
const DefaultPoolLow, DefaultPoolHigh = 10000, 19999

// Domains is what a deployment says about its domains and addresses (package domains builds
// its Config from it).
type Domains struct {
	// BaseDomain is the deployment's own domain (BASE_DOMAIN).
	BaseDomain string
	// DNSZone is the service's DNS zone (DNS_ZONE, default dns.<BaseDomain>).
	DNSZone string
	// NameServers are the DNS zone's name servers (NAME_SERVERS, default
	// ns1.<DNSZone>,ns2.<DNSZone>).
	NameServers []string
	// Regions are the region codes a client may name, the first being the default (REGIONS).
	Regions []string
	// AddrPools are the TCP addresses each region hands out (ADDR_POOLS).
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

// domains reads the domain settings, derived defaults included.
func (p *parser) domains() Domains {
	c := Domains{BaseDomain: strings.ToLower(p.get("BASE_DOMAIN")), AddrPools: map[string]Pool{}}
	if !validHostname(c.BaseDomain) {
		p.fail("BASE_DOMAIN", c.BaseDomain, "not a domain name")
	}
	c.DNSZone = strings.ToLower(cmp.Or(p.get("DNS_ZONE"), "dns."+c.BaseDomain))
	if !validHostname(c.DNSZone) {
		p.fail("DNS_ZONE", c.DNSZone, "not a domain name")
	}
	servers := cmp.Or(p.get("NAME_SERVERS"), "ns1."+c.DNSZone+",ns2."+c.DNSZone)
	for _, ns := range strings.Split(servers, ",") {
		ns = strings.ToLower(strings.TrimSpace(ns))
		if !validHostname(ns) {
			p.fail("NAME_SERVERS", servers, fmt.Sprintf("%q is not a host name", ns))
		}
		c.NameServers = append(c.NameServers, ns)
	}
	c.Regions = p.regions()
	pools := p.get("ADDR_POOLS")
	if pools == "" {
		for _, r := range c.Regions {
			c.AddrPools[r] = Pool{Hosts: []string{"tcp." + r + "." + c.BaseDomain}, Low: DefaultPoolLow, High: DefaultPoolHigh}
		}
		return c
	}
	for _, spec := range strings.Split(pools, ";") {
		if strings.TrimSpace(spec) == "" {
			continue
		}
		if why := c.addPool(spec); why != "" {
			p.fail("ADDR_POOLS", pools, why)
		}
	}
	return c
}

// regions parses REGIONS: region codes, each once.
func (p *parser) regions() []string {
	var out []string
	regions := p.get("REGIONS")
	for _, r := range strings.Split(regions, ",") {
		r = strings.TrimSpace(r)
		switch {
		case !validLabel(r):
			p.fail("REGIONS", regions, fmt.Sprintf("%q is not a region code (lowercase letters, digits and '-')", r))
		case slices.Contains(out, r):
			p.fail("REGIONS", regions, fmt.Sprintf("%q is listed twice", r))
		default:
			out = append(out, r)
		}
	}
	return out
}

// addPool adds the pool spec to c, or says why it cannot.
func (c *Domains) addPool(spec string) string {
	region, pool, why := parsePool(spec)
	if why != "" {
		return why
	}
	if !slices.Contains(c.Regions, region) {
		return fmt.Sprintf("region %q is not one of REGIONS (%s)", region, strings.Join(c.Regions, ", "))
	}
	if _, dup := c.AddrPools[region]; dup {
		return fmt.Sprintf("region %q has two pools", region)
	}
	for other, q := range c.AddrPools {
		if overlap(pool, q) {
			return fmt.Sprintf("the pools of %s and %s share addresses", region, other)
		}
	}
	c.AddrPools[region] = pool
	return ""
}

// parsePool reads "<region>=<host>[,<host>…]:<low>-<high>", or says why it cannot.
func parsePool(spec string) (string, Pool, string) {
	region, rest, ok := strings.Cut(strings.TrimSpace(spec), "=")
	hosts, ports, ok2 := strings.Cut(rest, ":")
	low, high, ok3 := strings.Cut(ports, "-")
	if !ok || !ok2 || !ok3 {
		return "", Pool{}, fmt.Sprintf("%q is not <region>=<host>[,<host>…]:<low>-<high>", spec)
	}
	var p Pool
	var err error
	if p.Low, err = strconv.Atoi(low); err == nil {
		p.High, err = strconv.Atoi(high)
	}
	if err != nil || p.Low < 1 || p.High > 65535 || p.Low > p.High {
		return "", Pool{}, fmt.Sprintf("%q: the port range must be <low>-<high> within 1-65535", spec)
	}
	for _, h := range strings.Split(hosts, ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if !validHostname(h) {
			return "", Pool{}, fmt.Sprintf("%q: %q is not a host name", spec, h)
		}
		if slices.Contains(p.Hosts, h) {
			return "", Pool{}, fmt.Sprintf("%q: host %q is listed twice", spec, h)
		}
		p.Hosts = append(p.Hosts, h)
	}
	return strings.TrimSpace(region), p, ""
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
