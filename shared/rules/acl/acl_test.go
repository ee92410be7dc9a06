package acl

import "testing"

func TestParse(t *testing.T) {
	cases := []struct {
		name string
		in   string
		ok   bool
	}{
		{"any", "*", true},
		{"host", "bind:example.ngrok.io", true},
		{"wildcard", "bind:*.example.com", true},
		{"address", "bind:1.tcp.ngrok.io:12345", true},
		{"label", "bind:env=prod", true},
		{"label wildcard key", "bind:*=prod", true},
		{"label wildcard value", "bind:env=*", true},
		{"label both wildcards", "bind:*=*", true},
		{"no prefix", "example.com", false},
		{"other verb", "connect:example.com", false},
		{"empty bind", "bind:", false},
		{"space", "bind:foo bar", false},
		{"inner wildcard", "bind:a.*.com", false},
		{"bare star host", "bind:*", false},
		{"port zero", "bind:host:0", false},
		{"port too big", "bind:host:70000", false},
		{"empty label key", "bind:=v", false},
		{"empty label value", "bind:k=", false},
		{"partial wildcard label", "bind:en*=v", false},
		{"leading hyphen", "bind:-a.com", false},
		{"empty label", "bind:a..com", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.in)
			if (err == nil) != c.ok {
				t.Fatalf("Parse(%q) err = %v, want ok=%v", c.in, err, c.ok)
			}
		})
	}
}

func mustACL(t *testing.T, rules ...string) ACL {
	a, i, err := ParseAll(rules)
	if err != nil {
		t.Fatalf("rule %d: %v", i, err)
	}
	return a
}

func TestMatcher(t *testing.T) {
	restricted := mustACL(t, "bind:app.example.com", "bind:*.dev.example.com", "bind:1.tcp.ngrok.io:20000", "bind:env=prod", "bind:*=shared", "bind:team=*")
	cases := []struct {
		name   string
		acl    ACL
		host   string
		addr   string
		port   int
		labels map[string]string
		want   bool
	}{
		{"no acl binds anything", nil, "anything.io", "", 0, nil, true},
		{"star binds anything", mustACL(t, "*"), "x.io", "", 0, nil, true},
		{"exact host", restricted, "app.example.com", "", 0, nil, true},
		{"exact host case-insensitive", restricted, "APP.Example.com", "", 0, nil, true},
		{"other host", restricted, "api.example.com", "", 0, nil, false},
		{"wildcard child", restricted, "x.dev.example.com", "", 0, nil, true},
		{"wildcard grandchild", restricted, "a.b.dev.example.com", "", 0, nil, true},
		{"wildcard literal", restricted, "*.dev.example.com", "", 0, nil, true},
		{"wildcard apex refused", restricted, "dev.example.com", "", 0, nil, false},
		{"suffix trick refused", restricted, "evildev.example.com", "", 0, nil, false},
		{"address", restricted, "", "1.tcp.ngrok.io", 20000, nil, true},
		{"address other port", restricted, "", "1.tcp.ngrok.io", 20001, nil, false},
		{"label exact", restricted, "", "", 0, map[string]string{"env": "prod"}, true},
		{"label wrong value", restricted, "", "", 0, map[string]string{"env": "dev"}, false},
		{"label any key", restricted, "", "", 0, map[string]string{"whatever": "shared"}, true},
		{"label any value", restricted, "", "", 0, map[string]string{"team": "x"}, true},
		{"every label must match", restricted, "", "", 0, map[string]string{"env": "prod", "zone": "a"}, false},
		{"empty label set refused", restricted, "", "", 0, map[string]string{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got bool
			switch {
			case c.host != "":
				got = c.acl.AllowsHostname(c.host)
			case c.addr != "":
				got = c.acl.AllowsAddr(c.addr, c.port)
			default:
				got = c.acl.AllowsLabels(c.labels)
			}
			if got != c.want {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"*", "bind:a.com", "bind:*.a.com", "bind:k=v", "bind:h:1", "bind:", "x"} {
		f.Add(s, "host.a.com")
	}
	f.Fuzz(func(t *testing.T, rule, host string) {
		r, err := Parse(rule)
		if err != nil {
			return
		}
		a := ACL{r}
		a.AllowsHostname(host)
		a.AllowsAddr(host, 1)
		a.AllowsLabels(map[string]string{host: rule})
	})
}
