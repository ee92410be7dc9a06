package listfilter

import (
	"testing"
	"time"
)

var key = map[string]any{
	"id": "ak_2", "description": "ci key", "metadata": "", "created_at": "2026-11-20T10:00:00Z",
	"token": nil, "owner_id": "usr_1", "acl": []any{"bind:a.com", "bind:k=v"}, "active": true,
	"ip_policy": map[string]any{"id": "ipp_1"},
}

func TestMatch(t *testing.T) {
	cases := []struct {
		name, expr string
		want       bool
	}{
		{"equal", `obj.description == "ci key"`, true},
		{"not equal", `obj.description != "ci key"`, false},
		{"single quotes", `obj.owner_id == 'usr_1'`, true},
		{"and", `obj.id == "ak_2" && obj.owner_id == "usr_1"`, true},
		{"or", `obj.id == "x" || obj.owner_id == "usr_1"`, true},
		{"not", `!(obj.id == "x")`, true},
		{"null", `obj.token == null`, true},
		{"absent is null", `obj.nope == null`, true},
		{"bool", `obj.active == true`, true},
		{"in list field", `"bind:a.com" in obj.acl`, true},
		{"in literal list", `obj.id in ["ak_1", "ak_2"]`, true},
		{"not in", `!(obj.id in ["ak_1"])`, true},
		{"size string", `size(obj.description) == 6`, true},
		{"size list", `size(obj.acl) > 1`, true},
		{"method size", `obj.acl.size() == 2`, true},
		{"empty metadata", `size(obj.metadata) == 0`, true},
		{"nested", `obj.ip_policy.id == "ipp_1"`, true},
		{"timestamp after", `obj.created_at > timestamp("2026-11-01T00:00:00Z")`, true},
		{"timestamp before", `obj.created_at < timestamp("2026-11-01T00:00:00Z")`, false},
		{"now minus 7d", `obj.created_at > timestamp(time.now).subtract("7d")`, true},
		{"now minus 1d", `obj.created_at > timestamp(time.now).subtract("24h")`, false},
		{"add", `timestamp("2026-11-19T10:00:00Z").add("1d") == timestamp("2026-11-20T10:00:00Z")`, true},
		{"field shift", `obj.created_at.add("1d") > timestamp("2026-11-21T00:00:00Z")`, true},
		{"type mismatch does not match", `obj.description > 5`, false},
		{"size of bool does not match", `size(obj.active) == 1`, false},
		{"string order", `obj.id >= "ak_1"`, true},
		{"escaped quote", `obj.description != "a\"b"`, true},
		{"escaped backslash", `obj.description != 'a\\b'`, true},
		{"unicode escape", `obj.description == "ci\u0020key"`, true},
		{"long unicode escape", `obj.description == "ci\U00000020key"`, true},
		{"hex escape", `obj.description == "ci\x20key"`, true},
		{"octal escape", `obj.description == "ci\040key"`, true},
		{"non-ASCII literal", `obj.description != "caf\u00e9" && obj.description != "café"`, true},
		{"fraction", `size(obj.acl) < 2.5`, true},
		{"exponent", `size(obj.acl) < 1e1`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Compile(c.expr)
			if err != nil {
				t.Fatalf("compile %q: %v", c.expr, err)
			}
			f.now = func() time.Time { return time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC) }
			got, err := f.Match(key)
			if err != nil || got != c.want {
				t.Fatalf("%q = %v (%v), want %v", c.expr, got, err, c.want)
			}
		})
	}
}

func TestCompileRefuses(t *testing.T) {
	cases := []struct{ name, expr string }{
		{"empty", ``},
		{"arithmetic", `obj.n + 1 == 2`},
		{"indexing", `obj.acl[0] == "x"`},
		{"ternary", `obj.a ? true : false`},
		{"regex", `obj.id.matches("a.*")`},
		{"unknown name", `foo == 1`},
		{"bad timestamp", `obj.created_at > timestamp("yesterday")`},
		{"bad duration", `timestamp(time.now).add("a week") > obj.created_at`},
		{"unterminated", `obj.id == "x`},
		{"dangling", `obj.id ==`},
		{"trailing", `obj.id == "x" obj`},
		{"too deep", string(make([]byte, 0)) + repeat("!", 100) + `true`},
		{"too long", `obj.id == "` + repeat("x", 5000) + `"`},
		// Invalid literals are refused, not read loosely.
		{"unknown escape", `obj.id == "\q"`},
		{"unknown escape single quotes", `obj.id == '\q'`},
		{"escape at end", `obj.id == "\`},
		{"short unicode escape", `obj.id == "\u12"`},
		{"surrogate escape", `obj.id == "\ud800"`},
		{"escape beyond Unicode", `obj.id == "\U00110000"`},
		{"bad hex escape", `obj.id == "\xzz"`},
		{"non-ASCII hex escape", `obj.id == "\xff"`},
		{"bad octal escape", `obj.id == "\08"`},
		{"invalid UTF-8 in a string", "obj.id == \"\xff\""},
		{"invalid UTF-8 outside strings", "obj.id == \"x\" \xc3"},
		{"line break in a string", "obj.id == \"a\nb\""},
		{"two points", `size(obj.acl) == 1.2.3`},
		{"trailing point", `size(obj.acl) == 1.`},
		{"number then letters", `size(obj.acl) == 2abc`},
		{"empty exponent", `size(obj.acl) == 1e`},
		{"hex number", `size(obj.acl) == 0x2`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Compile(c.expr); err == nil {
				t.Fatalf("%q compiled", c.expr)
			}
		})
	}
}

func repeat(s string, n int) string {
	out := ""
	for i := 0; i < n; i++ {
		out += s
	}
	return out
}

func FuzzCompileAndMatch(f *testing.F) {
	for _, s := range []string{`obj.id == "x"`, `size(obj.acl) > 1 && !(obj.a in [1, "b"])`, `obj.created_at > timestamp(time.now).subtract("7d")`, `((`, `"\`,
		`obj.id == "\q"`, `obj.id == "\u00e9\x41\101"`, "obj.id == \"\xff\"", `size(obj.acl) == 1.2.3`, `1e5 > 2.5e-1`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		flt, err := Compile(expr)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("compile error of type %T", err)
			}
			return
		}
		flt.Match(key)
	})
}

// wireText is a wire type in the shape families use: text members omitted when empty, one of
// them in an embedded struct, a nested object with its own, and members of other types.
type wireText struct {
	ID string `json:"id"`
	embeddedText
	Region string     `json:"region,omitempty"`
	Count  int        `json:"count,omitempty"`
	Owner  *wireOwner `json:"owner,omitempty"`
	Target wireOwner  `json:"target"`
	Hidden string     `json:"-"`
}

type embeddedText struct {
	Description string `json:"description,omitempty"`
	Metadata    string `json:"metadata,omitempty"`
}

type wireOwner struct {
	ID  string `json:"id"`
	URI string `json:"uri,omitempty"`
}

// TestAbsentTextIsEmpty: text members the wire form omits when empty are "" to the filter, as
// the platform's filters see them; other absent members stay null, and present ones are
// unchanged.
func TestAbsentTextIsEmpty(t *testing.T) {
	empty := wireText{ID: "ak_1", Target: wireOwner{ID: "x"}}
	set := wireText{ID: "ak_2", embeddedText: embeddedText{Description: "d", Metadata: "m"}, Region: "eu", Owner: &wireOwner{ID: "o", URI: "u"}}
	cases := []struct {
		expr       string
		empty, set bool
	}{
		{`obj.description == ""`, true, false},
		{`obj.metadata == ""`, true, false},
		{`size(obj.description) == 0`, true, false},
		{`obj.description != ""`, false, true},
		{`obj.description == null`, false, false},
		{`obj.region == ""`, true, false},
		{`obj.target.uri == ""`, true, true},
		{`obj.owner == null`, true, false},
		{`obj.owner.uri == ""`, false, false},
		{`obj.count == null`, true, true},
		{`obj.Hidden == null && obj.hidden == null`, true, true},
		{`obj.description == "d" && obj.metadata == "m"`, false, true},
	}
	for _, c := range cases {
		f, err := Compile(c.expr)
		if err != nil {
			t.Fatalf("compile %q: %v", c.expr, err)
		}
		for _, v := range []struct {
			obj  any
			want bool
		}{{empty, c.empty}, {&empty, c.empty}, {set, c.set}} {
			if got, err := f.Match(v.obj); err != nil || got != v.want {
				t.Errorf("%s on %+v: %v (%v), want %v", c.expr, v.obj, got, err, v.want)
			}
		}
	}
}
