package iprestrict

import (
	"math/rand/v2"
	"net/netip"
	"testing"

	"tunnelapi/shared/platform/api"
)

func TestParseCIDR(t *testing.T) {
	cases := []struct {
		in, want, code string
	}{
		{"10.0.0.0/8", "10.0.0.0/8", ""},
		{"0.0.0.0/0", "0.0.0.0/0", ""},
		{"192.0.2.7/32", "192.0.2.7/32", ""},
		{"2001:DB8::/32", "2001:db8::/32", ""},
		{"2001:0db8:0000::/48", "2001:db8::/48", ""},
		{"::/0", "::/0", ""},
		{"10.1.2.3/8", "", CodeNotNormalised},
		{"2001:db8::1/32", "", CodeNotNormalised},
		{"10.0.0.1", "", CodeMissingMask},
		{"2001:db8::1", "", CodeMissingMask},
		{"10.0.0.0/33", "", CodeInvalidCIDR},
		{"10.0.0/8", "", CodeInvalidCIDR},
		{"fe80::1%eth0/64", "", CodeInvalidCIDR},
		{"example.com/8", "", CodeInvalidCIDR},
		{"", "", CodeInvalidCIDR},
		{"10.0.0.0/-1", "", CodeInvalidCIDR},
		{"2001:db8::/129", "", CodeInvalidCIDR},
	}
	for _, c := range cases {
		p, err := ParseCIDR("cidr", c.in)
		if c.code == "" {
			if err != nil || p.String() != c.want {
				t.Errorf("ParseCIDR(%q) = %v, %v; want %s", c.in, p, err, c.want)
			}
			continue
		}
		e, ok := api.AsError(err)
		if !ok || e.Code != c.code || e.Field != "cidr" || e.Status != 400 {
			t.Errorf("ParseCIDR(%q) error %v, want %s on cidr", c.in, err, c.code)
		}
	}
	// 1409 names the normalised form.
	_, err := ParseCIDR("cidr", "10.1.2.3/8")
	if e, _ := api.AsError(err); e == nil || !contains(e.Msg, "10.0.0.0/8") {
		t.Errorf("1409 message %v does not name 10.0.0.0/8", err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func rule(cidr string, deny bool) Rule { return Rule{Prefix: netip.MustParsePrefix(cidr), Deny: deny} }

// The most specific matching CIDR across the restriction's policies decides; a tie is a deny;
// no match refuses.
func TestRuleSemantics(t *testing.T) {
	s := &State{
		Restrictions: []Restriction{{ID: "ipx_a", Enforced: true, PolicyIDs: []string{"ipp_1", "ipp_2"}}},
		Policies: map[string][]Rule{
			"ipp_1": {
				rule("10.0.0.0/8", false),
				rule("10.1.0.0/16", true),
				rule("10.1.2.0/24", false),
				rule("10.1.2.128/25", true),
				rule("192.0.2.0/24", false),
				rule("2001:db8::/32", false),
				rule("2001:db8:bad::/48", true),
				rule("2001:db8:bad:1::/64", false),
				rule("::1/128", false),
				rule("255.255.255.255/32", false),
			},
			"ipp_2": {
				rule("192.0.2.0/24", true), // the same CIDR as an allow in ipp_1: deny wins
				rule("198.51.100.0/24", false),
				rule("ffff::/16", false),
				rule("0.0.0.0/0", true),
				rule("172.16.0.0/12", false),
			},
		},
	}
	cases := []struct {
		addr  string
		allow bool
	}{
		{"10.0.0.1", true},
		{"10.255.255.255", true},
		{"10.1.0.1", false},
		{"10.1.2.1", true},
		{"10.1.2.127", true},
		{"10.1.2.128", false},
		{"10.1.2.255", false},
		{"10.1.3.0", false},
		{"10.2.0.0", true},
		{"192.0.2.10", false},
		{"198.51.100.99", true},
		{"203.0.113.1", false}, // only 0.0.0.0/0 deny matches
		{"172.31.255.255", true},
		{"172.32.0.0", false},
		{"255.255.255.255", true},
		{"0.0.0.0", false},
		{"2001:db8::1", true},
		{"2001:db8:bad::1", false},
		{"2001:db8:bad:1::5", true},
		{"2001:db8:bad:2::5", false},
		{"2001:db9::1", false}, // no IPv6 rule matches
		{"::1", true},
		{"::2", false},
		{"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true},
		{"::ffff:10.0.0.1", true}, // IPv4-mapped addresses are checked as IPv4
	}
	c := s.Compile()
	for _, tc := range cases {
		v := c.Check(netip.MustParseAddr(tc.addr))
		if got := v.Refused == ""; got != tc.allow {
			t.Errorf("%s: allowed=%v, want %v", tc.addr, got, tc.allow)
		}
	}
	// Unenforced restrictions warn and never refuse.
	s.Restrictions[0].Enforced = false
	v := s.Compile().Check(netip.MustParseAddr("10.1.0.1"))
	if v.Refused != "" || v.Warned != "ipx_a" {
		t.Errorf("unenforced: %+v", v)
	}
	if v := s.Compile().Check(netip.Addr{}); v.Warned == "" {
		t.Errorf("an unknown source must not match: %+v", v)
	}
}

// naive evaluates the semantics directly, for comparison with the compiled tables.
func naive(rules []Rule, a netip.Addr) Action {
	best, act := -1, None
	for _, r := range rules {
		if !r.Prefix.Contains(a) {
			continue
		}
		switch {
		case r.Prefix.Bits() > best:
			best, act = r.Prefix.Bits(), Allow
			if r.Deny {
				act = Deny
			}
		case r.Prefix.Bits() == best && r.Deny:
			act = Deny
		}
	}
	return act
}

func TestTableMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	randAddr := func(v6 bool) netip.Addr {
		if v6 {
			var b [16]byte
			for i := range b {
				b[i] = byte(rng.IntN(4)) // a small alphabet makes prefixes overlap often
			}
			return netip.AddrFrom16(b)
		}
		return netip.AddrFrom4([4]byte{byte(rng.IntN(4)), byte(rng.IntN(4)), byte(rng.IntN(256)), byte(rng.IntN(256))})
	}
	for round := 0; round < 200; round++ {
		var rules []Rule
		for i := rng.IntN(40); i > 0; i-- {
			v6 := rng.IntN(2) == 0
			bits := rng.IntN(33)
			if v6 {
				bits = rng.IntN(129)
			}
			p, _ := randAddr(v6).Prefix(bits)
			rules = append(rules, Rule{Prefix: p, Deny: rng.IntN(2) == 0})
		}
		tab := NewTable(rules)
		for i := 0; i < 300; i++ {
			a := randAddr(rng.IntN(2) == 0)
			if got, want := tab.Lookup(a), naive(rules, a); got != want {
				t.Fatalf("round %d: %s: table %v, naive %v (rules %v)", round, a, got, want, rules)
			}
		}
	}
}

func TestEncodeDecode(t *testing.T) {
	s := &State{
		Restrictions: []Restriction{{ID: "ipx_a", Enforced: true, PolicyIDs: []string{"ipp_1"}}, {ID: "ipx_b", PolicyIDs: []string{"ipp_1", "ipp_2"}}},
		Policies:     map[string][]Rule{"ipp_1": {rule("10.0.0.0/8", false), rule("2001:db8::/32", true)}, "ipp_2": {}},
	}
	got, err := Decode(s.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Restrictions) != 2 || got.Restrictions[1].PolicyIDs[1] != "ipp_2" || !got.Restrictions[0].Enforced ||
		len(got.Policies["ipp_1"]) != 2 || !got.Policies["ipp_1"][1].Deny || got.Policies["ipp_1"][1].Prefix.String() != "2001:db8::/32" {
		t.Fatalf("round trip: %+v", got)
	}
	for _, bad := range [][]byte{{9}, {1, 5}, {1, 1, 3, 'a'}, s.Encode()[:10]} {
		if _, err := Decode(bad); err == nil {
			t.Errorf("Decode(%v) accepted corrupt input", bad)
		}
	}
}

func FuzzParseCIDR(f *testing.F) {
	for _, s := range []string{"10.0.0.0/8", "10.1.2.3/8", "2001:DB8::/32", "::/0", "1.2.3.4", "fe80::1%eth0/64", "", "/", "1.2.3.4/", "::ffff:1.2.3.4/120"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseCIDR("cidr", s)
		if err != nil {
			e, ok := api.AsError(err)
			if !ok || e.Status != 400 || e.Field != "cidr" {
				t.Fatalf("ParseCIDR(%q): %v is not a 400 naming cidr", s, err)
			}
			return
		}
		// Accepted CIDRs are canonical and parse back to themselves.
		again, err := ParseCIDR("cidr", p.String())
		if err != nil || again != p || p.Masked() != p {
			t.Fatalf("ParseCIDR(%q) = %v, not canonical: %v %v", s, p, again, err)
		}
		NewTable([]Rule{{Prefix: p}}).Lookup(p.Addr())
	})
}

func FuzzDecode(f *testing.F) {
	s := &State{Restrictions: []Restriction{{ID: "ipx_a", Enforced: true, PolicyIDs: []string{"ipp_1"}}},
		Policies: map[string][]Rule{"ipp_1": {rule("10.0.0.0/8", false)}}}
	f.Add(s.Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		if st, err := Decode(b); err == nil {
			st.Compile().Check(netip.MustParseAddr("10.0.0.1"))
		}
	})
}

func TestStateChanges(t *testing.T) {
	s := (&State{}).Clone()
	s.PutRestriction(Restriction{ID: "ipx_a", Enforced: true, PolicyIDs: []string{"ipp_1"}}, map[string][]Rule{"ipp_1": {rule("10.0.0.0/8", false)}})
	// Replacing the restriction with one more policy keeps the rules it already had.
	s.PutRestriction(Restriction{ID: "ipx_a", Enforced: true, PolicyIDs: []string{"ipp_1", "ipp_2"}}, map[string][]Rule{"ipp_2": {rule("127.0.0.0/8", false)}})
	c := s.Compile()
	for _, a := range []string{"10.1.1.1", "127.0.0.1"} {
		if v := c.Check(netip.MustParseAddr(a)); v.Refused != "" {
			t.Fatalf("%s refused after adding a policy: %+v", a, s)
		}
	}
	s.SetRule("ipp_2", netip.Prefix{}, rule("127.0.0.1/32", true))
	s.SetRule("ipp_9", netip.Prefix{}, rule("1.0.0.0/8", false)) // unused policy: ignored
	if v := s.Compile().Check(netip.MustParseAddr("127.0.0.1")); v.Refused != "ipx_a" {
		t.Fatalf("deny rule not applied: %+v", v)
	}
	s.RemoveRule("ipp_2", netip.MustParsePrefix("127.0.0.1/32"))
	s.SetRule("ipp_1", netip.MustParsePrefix("10.0.0.0/8"), rule("11.0.0.0/8", false))
	if v := s.Compile().Check(netip.MustParseAddr("10.0.0.1")); v.Refused == "" || len(s.Policies) != 2 || s.Uses("ipp_9") {
		t.Fatalf("moved rule still matches: %+v", s)
	}
	s.RemoveRestriction("ipx_a")
	if !s.Empty() || len(s.Policies) != 0 || s.Encode() != nil {
		t.Fatalf("not empty after removing the only restriction: %+v", s)
	}
}
