package ratelimit

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	ok := []struct {
		in   string
		want Policy
	}{
		{"120/60", Policy{120, time.Minute}},
		{" 20/2 ", Policy{20, 2 * time.Second}},
		{"1/1", Policy{1, time.Second}},
		{"1000000/86400", Policy{MaxRequests, MaxWindow}},
		{"off", Policy{}},
		{"OFF", Policy{}},
		{"", Policy{}},
	}
	for _, c := range ok {
		got, err := Parse(c.in)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	bad := []struct{ in, says string }{
		{"120", "<requests>/<seconds>"},
		{"120/", "<requests>/<seconds>"},
		{"/60", "<requests>/<seconds>"},
		{"120/60s", "<requests>/<seconds>"},
		{"120/1m", "<requests>/<seconds>"},
		{"1.5/60", "<requests>/<seconds>"},
		{"120/60/1", "<requests>/<seconds>"},
		{"on", "<requests>/<seconds>"},
		{"0/60", "requests must be"},
		{"-1/60", "requests must be"},
		{"1000001/60", "requests must be"},
		{"120/0", "window must be"},
		{"120/86401", "window must be"},
		{"99999999999999999999/60", "<requests>/<seconds>"},
	}
	for _, c := range bad {
		if p, err := Parse(c.in); err == nil || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), EnvVar) {
			t.Errorf("Parse(%q) = %+v, %v; want an error naming %s saying %q", c.in, p, err, EnvVar, c.says)
		}
	}
}

func TestPolicyFields(t *testing.T) {
	p := Policy{120, time.Minute}
	if got, want := p.Field(), `"default";q=120;w=60`; got != want {
		t.Errorf("Field = %s, want %s", got, want)
	}
	if p.String() != "120/60" || (Policy{}).String() != "off" || (Policy{}).Enabled() || !p.Enabled() {
		t.Errorf("String/Enabled: %q %q", p.String(), Policy{}.String())
	}
}

func TestWindow(t *testing.T) {
	p := Policy{120, time.Minute}
	at := time.Unix(600*60+15, 0) // a quarter into window 600
	if i, f := p.window(at); i != 600 || f != 0.25 {
		t.Errorf("window = %d, %v; want 600, 0.25", i, f)
	}
	if i, f := p.window(time.Unix(601*60, 0)); i != 601 || f != 0 {
		t.Errorf("window at a boundary = %d, %v; want 601, 0", i, f)
	}
}

// The estimate weighs the previous window by what of it is still inside the rolling window;
// remaining and regain follow from it. Cases are worked out by hand for 120 requests per 60 s.
func TestSlidingWindow(t *testing.T) {
	p := Policy{120, time.Minute}
	cases := []struct {
		name      string
		s         state
		remaining int64
		regain    time.Duration // until one more request of quota than remaining
	}{
		// First request of a fresh account half-way through a window: 119 left; one more
		// only once this window's request has left the rolling window (30 s + 60 s).
		{"fresh", state{prev: 0, cur: 1, frac: 0.5}, 119, 90 * time.Second},
		// 120 in this window: none left; at 30 s + 1/120 of the next window (0.5 s) the
		// estimate is 119.
		{"full", state{prev: 0, cur: 120, frac: 0.5}, 0, 31 * time.Second},
		// A full previous window half inside the rolling window (60) plus 10 now: 50 left;
		// the 51st comes back when the previous window's weight drops below 59 (0.6 s).
		{"weighted", state{prev: 120, cur: 10, frac: 0.5}, 50, time.Second},
		// Previous window all but gone: 120·(1−0.99) = 1.2, plus 100: 18 left.
		{"late", state{prev: 120, cur: 100, frac: 0.99}, 18, time.Second},
		// Over the limit (the refused request already taken back): 120·0.75 + 30 = 120.
		{"limited", state{prev: 120, cur: 30, frac: 0.25}, 0, time.Second},
		// Nothing counted at all: the whole quota, for a whole window.
		{"idle", state{prev: 0, cur: 0, frac: 0.3}, 120, time.Minute},
	}
	for _, c := range cases {
		if got := p.remaining(c.s); got != c.remaining {
			t.Errorf("%s: remaining = %d, want %d", c.name, got, c.remaining)
		}
		if got := p.regain(c.s, c.remaining); got != c.regain {
			t.Errorf("%s: regain = %v, want %v", c.name, got, c.regain)
		}
	}
}

// Retry-After is tight: a request at the moment it names is admitted, a second before is not.
func TestRegainIsTight(t *testing.T) {
	checked := 0
	for _, p := range []Policy{{120, time.Minute}, {20, 2 * time.Second}, {1, time.Second}, {7, 13 * time.Second}} {
		for _, s := range []state{{0, p.Requests, 0.1}, {p.Requests, 0, 0.2}, {p.Requests / 2, p.Requests / 2, 0.6}, {p.Requests * 3, 0, 0.05}, {p.Requests, p.Requests / 3, 0.5}} {
			if p.remaining(s) > 0 {
				continue
			}
			checked++
			wait := p.regain(s, 0)
			if !admitted(p, s, wait) || wait > time.Second && admitted(p, s, wait-time.Second) {
				t.Errorf("%v %+v: regain %v is not the first whole second a request is admitted", p, s, wait)
			}
		}
	}
	if checked < 8 {
		t.Fatalf("only %d limited states checked", checked)
	}
}

// admitted reports whether one more request, wait after state s with nothing sent meanwhile,
// is within p.
func admitted(p Policy, s state, wait time.Duration) bool {
	f := s.frac + float64(wait)/float64(p.Window)
	switch {
	case f < 1:
		s.frac = f
	case f < 2:
		s = state{prev: s.cur, cur: 0, frac: f - 1}
	default:
		s = state{frac: f - float64(int(f))}
	}
	s.cur++
	return s.estimate() <= float64(p.Requests)+1e-9
}
