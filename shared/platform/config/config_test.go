package config_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/config"
)

func TestDomains(t *testing.T) {
	c, err := config.LoadHTTP(config.Map(map[string]string{"REGIONS": "eu, us", "ADDR_POOLS": "us=A.example.net,b.example.net:1-10; eu=c.example.net:5-5"}))
	if err != nil {
		t.Fatal(err)
	}
	d := c.FamilySettings.Domains
	if d.Regions[0] != "eu" || d.AddrPools["us"].Size() != 20 || d.AddrPools["us"].Addr(11) != "b.example.net:2" || d.AddrPools["eu"].Addr(0) != "c.example.net:5" {
		t.Fatalf("parsed %+v", d)
	}
	if d.BaseDomain != "tunnels.example.com" || d.DNSZone != "dns.tunnels.example.com" ||
		strings.Join(d.NameServers, ",") != "ns1.dns.tunnels.example.com,ns2.dns.tunnels.example.com" {
		t.Fatalf("derived defaults %+v", d)
	}
	def, err := config.LoadHTTP(config.Map(nil))
	if err != nil {
		t.Fatal(err)
	}
	if p := def.FamilySettings.Domains.AddrPools["jp"]; len(def.FamilySettings.Domains.Regions) != 7 || p.Hosts[0] != "tcp.jp.tunnels.example.com" || p.Low != 10000 || p.High != 19999 {
		t.Fatalf("default pools %+v", def.FamilySettings.Domains)
	}
	for _, bad := range []map[string]string{
		{"BASE_DOMAIN": "localhost"},
		{"BASE_DOMAIN": "a..b"},
		{"DNS_ZONE": "-x.example.com"},
		{"NAME_SERVERS": "ns1.example.com,"},
		{"REGIONS": "us,US"},
		{"REGIONS": "us,us"},
		{"REGIONS": "us,"},
		{"ADDR_POOLS": "mars=a.example.net:1-2"},
		{"ADDR_POOLS": "us=a.example.net:2-1"},
		{"ADDR_POOLS": "us=a.example.net:0-1"},
		{"ADDR_POOLS": "us=a.example.net:1-65536"},
		{"ADDR_POOLS": "us=a.example.net"},
		{"ADDR_POOLS": "us=a.example.net,a.example.net:1-2"},
		{"ADDR_POOLS": "us=a.example.net:1-2;us=b.example.net:1-2"},
		{"ADDR_POOLS": "us=a.example.net:1-5;eu=a.example.net:5-9"},
		{"ADDR_POOLS": "us=a_b.example.net:1-5"},
	} {
		for name := range bad {
			if _, err := config.LoadHTTP(config.Map(bad)); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%v: %v, want an error naming %s", bad, err, name)
			}
		}
	}
	if _, err := config.LoadHTTP(config.Map(map[string]string{"ADDR_POOLS": "us=a.example.net:1-5;eu=a.example.net:6-9"})); err != nil {
		t.Errorf("disjoint ranges of one host refused: %v", err)
	}
}

func TestLogLevel(t *testing.T) {
	for in, want := range map[string]slog.Level{"": slog.LevelInfo, "debug": slog.LevelDebug, "INFO": slog.LevelInfo, "Warn": slog.LevelWarn, "error": slog.LevelError} {
		c, err := config.LoadScheduler(config.Map(map[string]string{"LOG_LEVEL": in}))
		if err != nil || c.LogLevel != want {
			t.Errorf("LOG_LEVEL=%q: %v, %v; want %v", in, c.LogLevel, err, want)
		}
	}
	for _, bad := range []string{"loud", "info+1", "-4", "trace"} {
		if _, err := config.LoadScheduler(config.Map(map[string]string{"LOG_LEVEL": bad})); err == nil || !strings.Contains(err.Error(), "LOG_LEVEL") {
			t.Errorf("LOG_LEVEL=%q: %v, want an error naming LOG_LEVEL", bad, err)
		}
	}
}

func TestTypes(t *testing.T) {
	c, err := config.LoadEventWorker(config.Map(map[string]string{"DELIVERY_MAX_ATTEMPTS": " 3 ", "DELIVERY_BACKOFF": "1500ms", "OUTBOX_RETENTION": ""}))
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxAttempts != 3 || c.Backoff != 1500*time.Millisecond || c.OutboxRetention != 168*time.Hour {
		t.Fatalf("parsed %+v", c)
	}
	def, err := config.LoadEventWorker(config.Map(nil))
	if err != nil || def.MaxAttempts != 8 || def.Backoff != 2*time.Second {
		t.Fatalf("defaults %+v, %v", def, err)
	}
	for name, bad := range map[string]string{
		"DELIVERY_MAX_ATTEMPTS": "many", "DELIVERY_BACKOFF": "2", "OUTBOX_RETENTION": "-1h",
	} {
		if _, err := config.LoadEventWorker(config.Map(map[string]string{name: bad})); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%q: %v, want an error naming it", name, bad, err)
		}
	}
	if _, err := config.LoadEventWorker(config.Map(map[string]string{"DELIVERY_MAX_ATTEMPTS": "0"})); err == nil {
		t.Error("DELIVERY_MAX_ATTEMPTS=0 accepted")
	}
}

// The operator's principals are IAM ARNs of an account's root, users or roles, comma-separated;
// anything else (a wildcard, another service, an STS session, a bare account id) stops it,
// naming the variable. The usage worker's account is an account id.
func TestPrincipals(t *testing.T) {
	c, err := config.LoadOperator(config.Map(map[string]string{"OPERATOR_PRINCIPALS": "arn:aws:iam::123456789012:root, arn:aws-us-gov:iam::123456789012:role/ops/Operator,arn:aws:iam::210987654321:user/ci"}))
	if err != nil || len(c.Principals) != 3 || c.Principals[1] != "arn:aws-us-gov:iam::123456789012:role/ops/Operator" {
		t.Fatalf("parsed %q, %v", c.Principals, err)
	}
	for _, bad := range []string{"*", "123456789012", "arn:aws:iam::123456789012:*", "arn:aws:iam::123456789012:role/*x,",
		"arn:aws:sts::123456789012:assumed-role/Operator/s", "arn:aws:iam::12345:root", "arn:aws:iam::123456789012:group/ops",
		"arn:aws:iam::123456789012:role/", "arn:aws:iam::123456789012:root,"} {
		if _, err := config.LoadOperator(config.Map(map[string]string{"OPERATOR_PRINCIPALS": bad})); err == nil || !strings.Contains(err.Error(), "OPERATOR_PRINCIPALS") {
			t.Errorf("OPERATOR_PRINCIPALS=%q: %v, want an error naming it", bad, err)
		}
	}
	u, err := config.LoadUsageWorker(config.Map(map[string]string{"DEPLOYMENT_ACCOUNT_ID": "123456789012", "STACK_NAME": "tunnelapi"}))
	if err != nil || u.AccountID != "123456789012" || u.StackName != "tunnelapi" {
		t.Fatalf("usage worker %+v, %v", u, err)
	}
	if _, err := config.LoadUsageWorker(config.Map(map[string]string{"DEPLOYMENT_ACCOUNT_ID": "me"})); err == nil || !strings.Contains(err.Error(), "DEPLOYMENT_ACCOUNT_ID") {
		t.Errorf("DEPLOYMENT_ACCOUNT_ID=me: %v", err)
	}
}

// Every kind of process refuses a malformed value of each typed variable it reads, naming it;
// a secret is named but never repeated.
func TestEveryProcessRefusesBadValues(t *testing.T) {
	loads := map[string]func(config.Lookup) error{
		"http":         func(l config.Lookup) error { _, err := config.LoadHTTP(l); return err },
		"event worker": func(l config.Lookup) error { _, err := config.LoadEventWorker(l); return err },
		"cert worker":  func(l config.Lookup) error { _, err := config.LoadCertWorker(l); return err },
		"scheduler":    func(l config.Lookup) error { _, err := config.LoadScheduler(l); return err },
		"local":        func(l config.Lookup) error { _, err := config.LoadLocal(l); return err },
	}
	bad := map[string]string{
		"LOG_LEVEL": "chatty", "OUTBOX_RETENTION": "a week", "SEAL_LOCAL_KEY": "secret-but-not-hex",
	}
	for what, load := range loads {
		if err := load(config.Map(nil)); err != nil {
			t.Errorf("%s refuses the empty environment: %v", what, err)
		}
		for name, v := range bad {
			err := load(config.Map(map[string]string{name: v}))
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s: %s=%q: %v, want an error naming it", what, name, v, err)
			} else if strings.Contains(err.Error(), "secret-but-not-hex") {
				t.Errorf("%s: the error repeats a secret: %v", what, err)
			}
		}
	}
	only := map[string]map[string]string{
		"http":         {"RATE_LIMIT": "lots", "ADDR_POOLS": "x"},
		"event worker": {"DELIVERY_BACKOFF": "soon", "DELIVERY_MAX_ATTEMPTS": "-2"},
		"cert worker":  {"CERT_RENEW_BEFORE": "30d", "CERT_RETRY_BACKOFF": "0s", "CERT_RETRY_MAX_BACKOFF": "x", "CERT_DNS_RETRY": "1", "REGIONS": "US"},
		"local":        {"SCHEDULE_EVERY": "often", "FAULT_CRASH_AT": "sometime", "RATE_LIMIT": "0/60", "DELIVERY_BACKOFF": "x", "CERT_DNS_RETRY": "y"},
	}
	for what, vars := range only {
		for name, v := range vars {
			if err := loads[what](config.Map(map[string]string{name: v})); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s: %s=%q: %v, want an error naming it", what, name, v, err)
			}
		}
	}
}

// A kind of process reading a variable not declared for it is an error of the declaration.
func TestUndeclaredReadIsRefused(t *testing.T) {
	if _, err := config.Value(config.Map(nil), config.ByHTTP, "PEBBLE_MANAGEMENT"); err == nil || !strings.Contains(err.Error(), "not declared") {
		t.Errorf("an HTTP function reading PEBBLE_MANAGEMENT: %v", err)
	}
	if _, err := config.Value(config.Map(nil), config.ByTests, "NO_SUCH_VARIABLE"); err == nil {
		t.Error("an undeclared variable was read")
	}
	if v, err := config.Value(config.Map(map[string]string{"PEBBLE_MANAGEMENT": "http://x"}), config.ByTests, "PEBBLE_MANAGEMENT"); err != nil || v != "http://x" {
		t.Errorf("PEBBLE_MANAGEMENT for tests: %q, %v", v, err)
	}
}

func TestDeclaration(t *testing.T) {
	meanings := varMeanings(t)
	seen := map[string]bool{}
	for i, v := range config.Vars {
		if seen[v.Name] {
			t.Errorf("%s declared twice", v.Name)
		}
		seen[v.Name] = true
		if v.By == 0 {
			t.Errorf("%s has no reader", v.Name)
		}
		if i >= len(meanings) || strings.TrimSpace(meanings[i]) == "" {
			t.Errorf("%s has no meaning (the comment above its declaration in vars.go)", v.Name)
		}
	}
}

// varMeanings returns the comment above each element of Vars in vars.go, in order ("" for an
// element with none).
func varMeanings(t *testing.T) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "vars.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	comments := ast.NewCommentMap(fset, f, f.Comments)
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || len(spec.Names) != 1 || spec.Names[0].Name != "Vars" {
			return true
		}
		for _, elt := range spec.Values[0].(*ast.CompositeLit).Elts {
			var text []string
			for _, g := range comments[elt] {
				text = append(text, g.Text())
			}
			out = append(out, strings.Join(text, " "))
		}
		return false
	})
	if len(out) != len(config.Vars) {
		t.Fatalf("vars.go declares %d variables in Vars, config.Vars has %d", len(out), len(config.Vars))
	}
	return out
}

func TestWithDefaults(t *testing.T) {
	l := config.With(config.Map(map[string]string{"PORT": "", "TABLE_NAME": "mine"}), map[string]string{"PORT": "9000", "TABLE_NAME": "local"})
	c, err := config.LoadLocal(l)
	if err != nil || c.Port != "9000" || c.HTTP.Table != "mine" {
		t.Fatalf("%+v, %v", c, err)
	}
}

// Value is a variable as set, without its default: the test support asks whether a service of
// the stack is there.
func TestValueIsAsSet(t *testing.T) {
	if v, err := config.Value(config.Map(nil), config.ByTests, "ACME_DIRECTORY"); err != nil || v != "" {
		t.Errorf("unset ACME_DIRECTORY: %q, %v; want it empty, not its default", v, err)
	}
	if v, err := config.Value(config.Map(map[string]string{"ACME_DIRECTORY": " https://x/dir "}), config.ByTests, "ACME_DIRECTORY"); err != nil || v != "https://x/dir" {
		t.Errorf("ACME_DIRECTORY: %q, %v", v, err)
	}
}

// Begin applies a process's configuration: its outbox retention for the events it records,
// and its logger at LOG_LEVEL.
func TestBegin(t *testing.T) {
	c, err := config.LoadEventWorker(config.Map(map[string]string{"OUTBOX_RETENTION": "36h", "LOG_LEVEL": "warn"}))
	if err != nil {
		t.Fatal(err)
	}
	defer func(old time.Duration) { audit.OutboxRetention = old }(audit.OutboxRetention)
	log := config.Begin(c)
	if audit.OutboxRetention != 36*time.Hour {
		t.Errorf("outbox retention %v, want 36h", audit.OutboxRetention)
	}
	ctx := context.Background()
	if log.Enabled(ctx, slog.LevelInfo) || !log.Enabled(ctx, slog.LevelWarn) {
		t.Error("the logger does not follow LOG_LEVEL=warn")
	}
	def, err := config.LoadScheduler(config.Map(nil))
	if err != nil {
		t.Fatal(err)
	}
	config.Begin(def)
	if audit.OutboxRetention != audit.DefaultOutboxRetention {
		t.Errorf("default outbox retention %v, want %v", audit.OutboxRetention, audit.DefaultOutboxRetention)
	}
}

// A function parses only the sections its families read: without DomainSettings the domain
// settings are neither parsed (nil) nor checked; with it a malformed one stops the function.
func TestSectionsAreParsedOnlyWhenRead(t *testing.T) {
	bad := config.Map(map[string]string{"ADDR_POOLS": "nowhere"})
	c, err := config.HTTPLoader()(bad)
	if err != nil || c.FamilySettings.Domains != nil {
		t.Fatalf("without sections: %+v, %v; want no domain settings and no error", c.FamilySettings, err)
	}
	if _, err := config.HTTPLoader(config.DomainSettings)(bad); err == nil || !strings.Contains(err.Error(), "ADDR_POOLS") {
		t.Fatalf("with DomainSettings: %v, want an error naming ADDR_POOLS", err)
	}
	c, err = config.HTTPLoader(config.DomainSettings, config.DomainSettings)(config.Map(nil))
	if err != nil || c.FamilySettings.Domains == nil || c.FamilySettings.Domains.BaseDomain == "" {
		t.Fatalf("with DomainSettings: %+v, %v", c.FamilySettings, err)
	}
}

// make run's frps ports default to 7000 and 7080, and anything but a port is refused, named.
func TestLocalFRPPorts(t *testing.T) {
	c, err := config.LoadLocal(config.Map(nil))
	if err != nil || c.FRPBindPort != 7000 || c.FRPVhostHTTPPort != 7080 {
		t.Fatalf("defaults: %d, %d, %v", c.FRPBindPort, c.FRPVhostHTTPPort, err)
	}
	c, err = config.LoadLocal(config.Map(map[string]string{"FRP_BIND_PORT": "17000", "FRP_VHOST_HTTP_PORT": "17080"}))
	if err != nil || c.FRPBindPort != 17000 || c.FRPVhostHTTPPort != 17080 {
		t.Fatalf("set: %d, %d, %v", c.FRPBindPort, c.FRPVhostHTTPPort, err)
	}
	for _, name := range []string{"FRP_BIND_PORT", "FRP_VHOST_HTTP_PORT"} {
		for _, bad := range []string{"0", "65536", "http", "-1"} {
			if _, err := config.LoadLocal(config.Map(map[string]string{name: bad})); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s=%q: %v, want an error naming it", name, bad, err)
			}
		}
	}
}
