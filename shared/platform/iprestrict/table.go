package iprestrict

import (
	"net/netip"
	"sort"
)

// Action is what a rule (or a range of addresses) says about a source address.
type Action uint8

// Actions. None means no rule matches, which refuses as a deny does.
const (
	None Action = iota
	Allow
	Deny
)

// Rule is one CIDR with its action.
type Rule struct {
	Prefix netip.Prefix
	Deny   bool
}

// u128 is an address as a 128-bit number (IPv4 in the low 32 bits of its own table).
type u128 struct{ hi, lo uint64 }

func (a u128) less(b u128) bool { return a.hi < b.hi || a.hi == b.hi && a.lo < b.lo }

func (a u128) inc() (u128, bool) {
	lo := a.lo + 1
	hi := a.hi
	if lo == 0 {
		hi++
		if hi == 0 {
			return u128{}, false
		}
	}
	return u128{hi, lo}, true
}

func addrNum(a netip.Addr) u128 {
	if a.Is4() {
		b := a.As4()
		return u128{0, uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])}
	}
	b := a.As16()
	var n u128
	for i := 0; i < 8; i++ {
		n.hi = n.hi<<8 | uint64(b[i])
		n.lo = n.lo<<8 | uint64(b[8+i])
	}
	return n
}

// lastOf returns the highest address of p (p is masked).
func lastOf(p netip.Prefix) u128 {
	start := addrNum(p.Addr())
	host := p.Addr().BitLen() - p.Bits()
	switch {
	case host == 0:
		return start
	case host >= 64:
		return u128{start.hi | (1<<(host-64) - 1) | boolMask(host == 128), ^uint64(0)}
	default:
		return u128{start.hi, start.lo | (1<<host - 1)}
	}
}

func boolMask(all bool) uint64 {
	if all {
		return ^uint64(0)
	}
	return 0
}

// span says that every address from start up to the next span's start has action act.
type span struct {
	start u128
	act   Action
}

// Table answers, for one restriction, what the most specific matching CIDR says about an
// address; on a tie (the same CIDR in two policies with different actions) deny wins. Lookups
// are a binary search over disjoint ranges, so cost grows with log(rules).
type Table struct {
	v4, v6 []span
}

// NewTable compiles rules into a Table.
func NewTable(rules []Rule) *Table {
	var v4, v6 []Rule
	for _, r := range rules {
		if r.Prefix.Addr().Is4() {
			v4 = append(v4, r)
		} else {
			v6 = append(v6, r)
		}
	}
	return &Table{v4: flatten(v4), v6: flatten(v6)}
}

// flatten turns nested or disjoint prefixes into disjoint ranges carrying the action of the
// most specific prefix that covers them.
func flatten(rules []Rule) []span {
	type pfx struct {
		start, last u128
		bits        int
		act         Action
	}
	ps := make([]pfx, 0, len(rules))
	for _, r := range rules {
		act := Allow
		if r.Deny {
			act = Deny
		}
		p := r.Prefix.Masked()
		ps = append(ps, pfx{addrNum(p.Addr()), lastOf(p), p.Bits(), act})
	}
	// Widest first at a shared start, so that a stack of open prefixes is always nested.
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].start != ps[j].start {
			return ps[i].start.less(ps[j].start)
		}
		if ps[i].bits != ps[j].bits {
			return ps[i].bits < ps[j].bits
		}
		return ps[i].act > ps[j].act // deny first, so the duplicate that survives is deny
	})
	var out []span
	emit := func(at u128, act Action) {
		if n := len(out); n > 0 && out[n-1].start == at {
			out[n-1].act = act
			if n > 1 && out[n-2].act == act || n == 1 && act == None {
				out = out[:n-1]
			}
			return
		}
		if n := len(out); n > 0 && out[n-1].act == act || len(out) == 0 && act == None {
			return
		}
		out = append(out, span{at, act})
	}
	var stack []pfx
	closeUntil := func(limit *u128) {
		for len(stack) > 0 {
			top := stack[len(stack)-1]
			if limit != nil && !top.last.less(*limit) {
				return
			}
			stack = stack[:len(stack)-1]
			next, ok := top.last.inc()
			if !ok {
				continue
			}
			act := None
			if len(stack) > 0 {
				act = stack[len(stack)-1].act
			}
			emit(next, act)
		}
	}
	for i, p := range ps {
		if i > 0 && p.start == ps[i-1].start && p.bits == ps[i-1].bits {
			continue // same CIDR again: the first (deny if any) already decided
		}
		closeUntil(&p.start)
		emit(p.start, p.act)
		stack = append(stack, p)
	}
	closeUntil(nil)
	return out
}

// Lookup returns the action of the most specific rule matching a.
func (t *Table) Lookup(a netip.Addr) Action {
	if !a.IsValid() {
		return None
	}
	a = a.Unmap()
	spans := t.v6
	if a.Is4() {
		spans = t.v4
	}
	n := addrNum(a)
	i := sort.Search(len(spans), func(i int) bool { return n.less(spans[i].start) })
	if i == 0 {
		return None
	}
	return spans[i-1].act
}

// Len is the number of ranges in the table.
func (t *Table) Len() int { return len(t.v4) + len(t.v6) }
