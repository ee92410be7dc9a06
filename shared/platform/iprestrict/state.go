package iprestrict

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"slices"
)

// Restriction is one `api` restriction as the compiled state keeps it.
type Restriction struct {
	ID        string
	Enforced  bool
	PolicyIDs []string
}

// State is everything the API IP check needs: the account's `api` restrictions and the rules
// of every policy they use. It is stored encoded, one item per version, and replaced in the same
// transaction as any change to a restriction of type api or to a rule of a policy one uses.
type State struct {
	Restrictions []Restriction
	Policies     map[string][]Rule
}

// MaxEncodedBytes bounds the encoded state so its item stays well inside DynamoDB's
// 400 KB item limit (about 40,000 IPv4 or 15,000 IPv6 rules).
const MaxEncodedBytes = 300 << 10

// Empty reports whether there is nothing to enforce.
func (s *State) Empty() bool { return s == nil || len(s.Restrictions) == 0 }

// Uses reports whether any api restriction uses policy.
func (s *State) Uses(policy string) bool {
	if s == nil {
		return false
	}
	for _, r := range s.Restrictions {
		if slices.Contains(r.PolicyIDs, policy) {
			return true
		}
	}
	return false
}

// Clone returns a deep copy, so a mutation can derive a new state without touching the cached one.
func (s *State) Clone() *State {
	out := &State{Policies: map[string][]Rule{}}
	if s == nil {
		return out
	}
	for _, r := range s.Restrictions {
		out.Restrictions = append(out.Restrictions, Restriction{r.ID, r.Enforced, slices.Clone(r.PolicyIDs)})
	}
	for id, rules := range s.Policies {
		out.Policies[id] = slices.Clone(rules)
	}
	return out
}

// PutRestriction adds or replaces restriction r; rules gives the rules of any policy of r that
// the state does not hold yet.
func (s *State) PutRestriction(r Restriction, rules map[string][]Rule) {
	// Not RemoveRestriction: its collection would drop rules of policies r keeps using.
	s.Restrictions = slices.DeleteFunc(s.Restrictions, func(x Restriction) bool { return x.ID == r.ID })
	s.Restrictions = append(s.Restrictions, r)
	for _, p := range r.PolicyIDs {
		if _, ok := s.Policies[p]; !ok {
			s.Policies[p] = slices.Clone(rules[p])
		}
	}
	s.gc()
}

// RemoveRestriction drops restriction id and the rules no remaining restriction uses.
func (s *State) RemoveRestriction(id string) {
	s.Restrictions = slices.DeleteFunc(s.Restrictions, func(r Restriction) bool { return r.ID == id })
	s.gc()
}

// SetRule adds rule to policy (replacing old when valid), when policy is used.
func (s *State) SetRule(policy string, old netip.Prefix, rule Rule) {
	rules, ok := s.Policies[policy]
	if !ok {
		return
	}
	rules = slices.DeleteFunc(rules, func(r Rule) bool { return r.Prefix == old || r.Prefix == rule.Prefix })
	s.Policies[policy] = append(rules, rule)
}

// RemoveRule drops the rule for prefix from policy.
func (s *State) RemoveRule(policy string, prefix netip.Prefix) {
	if rules, ok := s.Policies[policy]; ok {
		s.Policies[policy] = slices.DeleteFunc(rules, func(r Rule) bool { return r.Prefix == prefix })
	}
}

func (s *State) gc() {
	used := map[string]bool{}
	for _, r := range s.Restrictions {
		for _, p := range r.PolicyIDs {
			used[p] = true
		}
	}
	for p := range s.Policies {
		if !used[p] {
			delete(s.Policies, p)
		}
	}
}

// Verdict is what the restrictions say about one source address.
type Verdict struct {
	// Refused is the first enforced restriction that refuses the address ("" when none does).
	Refused string
	// Warned is the first unenforced restriction that would have refused it.
	Warned string
}

// Compiled is a State made ready for lookups: one Table per restriction.
type Compiled struct {
	restrictions []Restriction
	tables       []*Table
}

// Compile builds the lookup tables of s.
func (s *State) Compile() *Compiled {
	c := &Compiled{}
	if s == nil {
		return c
	}
	for _, r := range s.Restrictions {
		var rules []Rule
		for _, p := range r.PolicyIDs {
			rules = append(rules, s.Policies[p]...)
		}
		c.restrictions = append(c.restrictions, r)
		c.tables = append(c.tables, NewTable(rules))
	}
	return c
}

// Check applies every restriction to a: the most specific matching CIDR across a restriction's
// policies decides, deny wins a tie, and no match refuses.
func (c *Compiled) Check(a netip.Addr) Verdict {
	var v Verdict
	for i, r := range c.restrictions {
		if c.tables[i].Lookup(a) == Allow {
			continue
		}
		if r.Enforced {
			if v.Refused == "" {
				v.Refused = r.ID
			}
		} else if v.Warned == "" {
			v.Warned = r.ID
		}
	}
	return v
}

// encoding: a version byte, then the policies (id, rules) and the restrictions (id, enforced,
// policy indexes). Each rule is a flags byte (bit 0 deny, bit 1 IPv6), the mask length and
// the 4 or 16 address bytes.
const encodingVersion = 1

// Encode serialises s compactly for its version's item.
func (s *State) Encode() []byte {
	if s.Empty() {
		return nil
	}
	b := []byte{encodingVersion}
	ids := make([]string, 0, len(s.Policies))
	for id := range s.Policies {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	index := map[string]int{}
	b = binary.AppendUvarint(b, uint64(len(ids)))
	for i, id := range ids {
		index[id] = i
		b = appendString(b, id)
		rules := s.Policies[id]
		b = binary.AppendUvarint(b, uint64(len(rules)))
		for _, r := range rules {
			var flags byte
			if r.Deny {
				flags |= 1
			}
			if r.Prefix.Addr().Is6() {
				flags |= 2
			}
			b = append(b, flags, byte(r.Prefix.Bits()))
			b = append(b, r.Prefix.Addr().AsSlice()...)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(s.Restrictions)))
	for _, r := range s.Restrictions {
		b = appendString(b, r.ID)
		if r.Enforced {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		b = binary.AppendUvarint(b, uint64(len(r.PolicyIDs)))
		for _, p := range r.PolicyIDs {
			b = binary.AppendUvarint(b, uint64(index[p]))
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errCorrupt = errors.New("iprestrict: corrupt restriction state")

// Decode parses what Encode wrote; an empty input is the empty state.
func Decode(b []byte) (*State, error) {
	s := &State{Policies: map[string][]Rule{}}
	if len(b) == 0 {
		return s, nil
	}
	if b[0] != encodingVersion {
		return nil, errCorrupt
	}
	d := decoder{b: b[1:]}
	n := d.count()
	ids := make([]string, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		id := d.str()
		nr := d.count()
		rules := make([]Rule, 0, nr)
		for j := 0; j < nr && d.err == nil; j++ {
			flags, bits := d.byte(), int(d.byte())
			size := 4
			if flags&2 != 0 {
				size = 16
			}
			a, ok := netip.AddrFromSlice(d.bytes(size))
			if !ok {
				d.err = errCorrupt
				break
			}
			p, err := a.Prefix(bits)
			if err != nil {
				d.err = errCorrupt
				break
			}
			rules = append(rules, Rule{Prefix: p, Deny: flags&1 != 0})
		}
		ids = append(ids, id)
		s.Policies[id] = rules
	}
	nr := d.count()
	for i := 0; i < nr && d.err == nil; i++ {
		r := Restriction{ID: d.str(), Enforced: d.byte() == 1}
		np := d.count()
		for j := 0; j < np && d.err == nil; j++ {
			k := d.index()
			if k >= len(ids) {
				d.err = errCorrupt
				break
			}
			r.PolicyIDs = append(r.PolicyIDs, ids[k])
		}
		s.Restrictions = append(s.Restrictions, r)
	}
	if d.err != nil {
		return nil, d.err
	}
	return s, nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) count() int {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > uint64(len(d.b)) {
		d.err = errCorrupt
		return 0
	}
	d.b = d.b[n:]
	return int(v)
}

func (d *decoder) index() int {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > 1<<31 {
		d.err = errCorrupt
		return 0
	}
	d.b = d.b[n:]
	return int(v)
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil || len(d.b) < n {
		d.err = errCorrupt
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) byte() byte {
	if b := d.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *decoder) str() string { return string(d.bytes(d.count())) }
