package config

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Lookup returns the value of a variable and whether it is set, as os.LookupEnv does.
type Lookup func(name string) (string, bool)

// Env is the process's environment.
func Env(name string) (string, bool) { return os.LookupEnv(name) }

// With is lookup with defaults for variables it leaves unset or empty (the local server's
// own, which a deployment leaves to the template).
func With(lookup Lookup, defaults map[string]string) Lookup {
	return func(name string) (string, bool) {
		if v, ok := lookup(name); ok && v != "" {
			return v, true
		}
		v, ok := defaults[name]
		return v, ok
	}
}

// Map is a Lookup over a fixed set of values (tests of a configuration).
func Map(values map[string]string) Lookup {
	return func(name string) (string, bool) {
		v, ok := values[name]
		return v, ok
	}
}

// parser reads the variables of one kind of process, collecting every malformed value.
type parser struct {
	lookup Lookup
	as     Process
	errs   []error
}

// get returns the value of name, trimmed, or its declared default when unset or empty.
func (p *parser) get(name string) string {
	s, v := p.set(name)
	if s == "" && v != nil {
		return v.Default
	}
	return s
}

// set returns the value of name as set, trimmed, and its declaration. A variable not declared
// for the kind parsing is an error (of the declaration, not the value): its declaration is nil.
func (p *parser) set(name string) (string, *Var) {
	v := declared(name)
	if v == nil || v.By&p.as == 0 {
		p.errs = append(p.errs, fmt.Errorf("config: %s is not declared as read by the %s (package config, Vars)", name, p.as))
		return "", nil
	}
	s, _ := p.lookup(name)
	return strings.TrimSpace(s), v
}

// fail records that name's value is malformed: why says how.
func (p *parser) fail(name, value, why string) {
	if v := declared(name); v != nil && v.Secret {
		p.errs = append(p.errs, fmt.Errorf("config: %s: %s", name, why))
		return
	}
	p.errs = append(p.errs, fmt.Errorf("config: %s=%q: %s", name, value, why))
}

// err is every malformed value at once, each once (the local server parses the settings the
// functions share for each of them), nil when there is none.
func (p *parser) err() error {
	var out []error
	seen := map[string]bool{}
	for _, e := range p.errs {
		if !seen[e.Error()] {
			seen[e.Error()] = true
			out = append(out, e)
		}
	}
	return errors.Join(out...)
}

// str is a string variable.
func (p *parser) str(name string) string { return p.get(name) }

// duration is a positive Go duration ("90s", "1h30m"); zero when unset with no default.
func (p *parser) duration(name string) time.Duration {
	s := p.get(name)
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		p.fail(name, s, "not a positive Go duration such as 90s or 1h30m")
		return 0
	}
	return d
}

// count is a positive whole number; zero when unset with no default.
func (p *parser) count(name string) int {
	s := p.get(name)
	if s == "" {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		p.fail(name, s, "not a positive whole number")
		return 0
	}
	return n
}

// port is a TCP port number (1 to 65535); zero when unset with no default.
func (p *parser) port(name string) int {
	s := p.get(name)
	if s == "" {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		p.fail(name, s, "not a TCP port (1 to 65535)")
		return 0
	}
	return n
}

// awsAccount is an AWS account id (12 digits) or empty.
func (p *parser) awsAccount(name string) string {
	s := p.get(name)
	if s == "" {
		return ""
	}
	if len(s) != 12 || strings.Trim(s, "0123456789") != "" {
		p.fail(name, s, "not an AWS account id (12 digits)")
		return ""
	}
	return s
}

// principalARN is an IAM principal a list of principals may name: an account's root, a user or
// a role (with its path). It is compiled by the first process that parses such a list (the
// operator's), not at every function's start.
var principalARN = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:(root|user/[\w+=,.@/-]+|role/[\w+=,.@/-]+)$`)
})

// principals is a comma-separated list of IAM principal ARNs (principalARN); nil when unset.
func (p *parser) principals(name string) []string {
	s := p.get(name)
	if s == "" {
		return nil
	}
	var out []string
	for a := range strings.SplitSeq(s, ",") {
		a = strings.TrimSpace(a)
		if !principalARN().MatchString(a) || strings.HasSuffix(a, "/") {
			p.fail(name, s, fmt.Sprintf("%q is not the ARN of an account's root, an IAM user or an IAM role (arn:aws:iam::<account>:root, …:user/<name>, …:role/<name>)", a))
			return nil
		}
		out = append(out, a)
	}
	return out
}

// flag is a variable that matters by being set at all (any non-empty value).
func (p *parser) flag(name string) bool { return p.get(name) != "" }

// level is a log level: debug, info, warn or error, in any case.
func (p *parser) level(name string) slog.Level {
	s := p.get(name)
	var l slog.Level
	switch strings.ToLower(s) {
	case "debug", "info", "warn", "error":
		l.UnmarshalText([]byte(s))
	default:
		p.fail(name, s, "not one of debug, info, warn, error")
	}
	return l
}

// oneOf is a variable whose value, when set, is one of allowed.
func (p *parser) oneOf(name string, allowed ...string) string {
	s := p.get(name)
	if s == "" {
		return ""
	}
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	p.fail(name, s, "not one of "+strings.Join(allowed, ", "))
	return ""
}
