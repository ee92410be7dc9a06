package ids

import (
	"testing"
	"time"
)

func TestIDsAreTimeOrderedAndParse(t *testing.T) {
	a := NewAt(APIKey, time.Unix(1700000000, 0))
	b := NewAt(APIKey, time.Unix(1700000001, 0))
	if !(a < b) {
		t.Fatalf("%s !< %s", a, b)
	}
	if ts, err := Time(a); err != nil || ts.Unix() != 1700000000 {
		t.Fatalf("Time = %v %v", ts, err)
	}
	cases := []struct {
		id, prefix string
		want       bool
	}{
		{a, APIKey, true},
		{a, Credential, false},
		{"ak_short", APIKey, false},
		{"ak_" + "!" + a[4:], APIKey, false},
		{"", APIKey, false},
		{"_" + a[3:], "", false},
	}
	for _, c := range cases {
		if got := Is(c.id, c.prefix); got != c.want {
			t.Errorf("Is(%q, %q) = %v", c.id, c.prefix, got)
		}
	}
}

func TestTokenShape(t *testing.T) {
	id := New(APIKey)
	tok := NewToken(id)
	if len(tok) != 49 || tok[:27] != id[3:] || tok[27] != '_' {
		t.Fatalf("token %q does not carry the id's KSUID", tok)
	}
	if NewToken(id) == tok {
		t.Fatal("tokens repeat")
	}
}

func FuzzParse(f *testing.F) {
	f.Add("ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc")
	f.Add("x_")
	f.Fuzz(func(t *testing.T, s string) {
		p, _, err := Parse(s)
		if err == nil && !Is(s, p) {
			t.Fatalf("Parse ok but Is false for %q", s)
		}
	})
}
