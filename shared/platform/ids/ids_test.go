package ids

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/segmentio/ksuid"
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

// agreesOnParse fails t unless parseKSUID reads s as ksuid.Parse does.
func agreesOnParse(t testing.TB, s string) {
	t.Helper()
	want, werr := ksuid.Parse(s)
	got, ok := parseKSUID(s)
	if (werr == nil) != ok || !bytes.Equal(got[:], want[:]) {
		t.Errorf("parseKSUID(%q) = %x %v, the library %x %v", s, got, ok, want, werr)
	}
}

// KSUIDs are the library's: the same string for the same bytes, the same time, and the same
// reading of any 27 characters (those outside base62 too, and numbers over 160 bits).
func TestKSUIDAgreesWithTheLibrary(t *testing.T) {
	r := rand.New(rand.NewPCG(40, 2))
	for i := range 20000 {
		var k KSUID
		for j := range k {
			k[j] = byte(r.Uint32())
		}
		switch i {
		case 0:
			k = KSUID{}
		case 1:
			k = KSUID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		}
		lib, err := ksuid.FromBytes(k[:])
		if err != nil {
			t.Fatal(err)
		}
		if k.String() != lib.String() || !k.Time().Equal(lib.Time()) {
			t.Fatalf("%x: %s %v, the library %s %v", k[:], k, k.Time(), lib, lib.Time())
		}
		agreesOnParse(t, lib.String())
		// Any characters, and base62 ones near the 160-bit limit.
		b := make([]byte, 27)
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		agreesOnParse(t, string(b))
		for j := range b {
			b[j] = base62[r.IntN(len(base62))]
		}
		b[0] = "0123456789ab"[r.IntN(12)]
		agreesOnParse(t, string(b))
	}
	for _, s := range []string{"aWgEPTl1tmebfsQzFP4bxwgy80V", "aWgEPTl1tmebfsQzFP4bxwgy80W", "zzzzzzzzzzzzzzzzzzzzzzzzzzz", "000000000000000000000000000", "!00000000000000000000000000"} {
		agreesOnParse(t, s)
	}
	at := time.Unix(1700000000, 0)
	if k := NewKSUID(at); !k.Time().Equal(at) || bytes.Equal(k[4:], make([]byte, 16)) {
		t.Fatalf("NewKSUID(%v) = %x", at, k[:])
	}
	if want, _ := ksuid.FromParts(at, make([]byte, 16)); Floor("x", at) != "x_"+want.String() {
		t.Fatalf("Floor = %s, want x_%s", Floor("x", at), want)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc")
	f.Add("x_")
	f.Add("x_aWgEPTl1tmebfsQzFP4bxwgy80W")
	f.Fuzz(func(t *testing.T, s string) {
		p, _, err := Parse(s)
		if err == nil && !Is(s, p) {
			t.Fatalf("Parse ok but Is false for %q", s)
		}
		if len(s) >= 27 {
			agreesOnParse(t, s[len(s)-27:])
		}
	})
}
