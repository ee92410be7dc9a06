// Package samples makes what the sample events of a function (events/<dir>/*.json, whose format
// package app defines) refer to besides their own resource, as the function's set-up declares it
// in events/<dir>/setup.json (app.SetupFile): the resources of other families to create first
// and the values of its placeholders. A function without the file needs no set-up. Only the
// tests that send the samples and the tools that write them filled in (infra/samlocal) use it.
//
// The files in fixtures/ are test fixtures, not secrets: a CA certificate, a server
// certificate with its private key and a certificate request, made once with crypto/x509 (ECDSA
// P-256, valid from 2026 to 2126) for samples to upload.
package samples

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"

	"tunnelapi/shared/app"
)

// Creator creates a resource for the samples' account (POST body to path) and returns the
// created object; any status but 201 is an error.
type Creator func(ctx context.Context, path string, body any) (map[string]any, error)

// Reporter has a tunnel server report, for the samples' account, an agent's session with one
// tunnel (what is never created through the API) and returns its fields: session_id,
// tunnel_id and public_url.
type Reporter func(ctx context.Context) (map[string]string, error)

// Makers make, in the samples' account, what a set-up asks for.
type Makers struct {
	Create Creator
	// Report is nil for a caller whose functions' set-ups report nothing.
	Report Reporter
}

// A set-up file is a JSON object of this form: Values maps placeholders to their text, and each
// of Creates is a POST made in order, whose answer's string fields fill the placeholders its
// Answer maps them to. Values and bodies may hold the placeholders the interpreter fills (Unique,
// UniqueSSHKey and the fixtures), bodies also Values' and earlier answers'. Reported, when
// present, fills placeholders from the fields of a session a tunnel server reports (Reporter):
// the samples of what only tunnel servers make name theirs that way.
//
//	{"values": {"{{domain}}": "sample-{{unique}}.example.com"},
//	 "creates": [{"path": "/reserved_domains", "body": {"domain": "{{domain}}"}, "answer": {"{{domain_id}}": "id"}}]}
//	{"reported": {"{{id}}": "tunnel_id"}}
type setup struct {
	Values  map[string]string `json:"values"`
	Creates []struct {
		Path   string            `json:"path"`
		Body   any               `json:"body"`
		Answer map[string]string `json:"answer"`
	} `json:"creates"`
	Reported map[string]string `json:"reported"`
}

// Placeholders the interpreter fills in every set-up.
const (
	// Unique is a decimal number that no other set-up of any run gets: for values unique across
	// accounts, such as domains, since runs of the samples may share a table.
	Unique = "{{unique}}"
	// UniqueSSHKey is a fresh SSH public key in authorized-keys form (no comment): an SSH
	// credential holds its key once across accounts.
	UniqueSSHKey = "{{unique_ssh_key}}"
)

// The fixtures, by the placeholders that set-ups name them with.
var (
	//go:embed fixtures/ca.pem
	fixtureCA string
	//go:embed fixtures/cert.pem
	fixtureCert string
	//go:embed fixtures/key.pem
	fixtureKey string
	//go:embed fixtures/csr.pem
	fixtureCSR string

	fixtures = map[string]string{
		"{{fixture_ca_pem}}":   fixtureCA,   // a self-signed CA certificate
		"{{fixture_cert_pem}}": fixtureCert, // a self-signed server certificate for sample.example.com
		"{{fixture_key_pem}}":  fixtureKey,  // its PKCS#8 private key
		"{{fixture_csr}}":      fixtureCSR,  // a certificate request, as a Kubernetes operator sends
	}
)

// placeholder is a placeholder's form.
var placeholder = regexp.MustCompile(`\{\{[a-z_]+\}\}`)

// last is the last Unique handed out.
var last atomic.Int64

// Setup makes, with m, what the samples of the function in folder dir under the checkout at
// root refer to besides their own resource, as its set-up file declares, and returns the
// values of the placeholders it fills (none without the file).
func Setup(ctx context.Context, root, dir string, m Makers) (map[string]string, error) {
	raw, err := os.ReadFile(filepath.Join(root, "events", dir, app.SetupFile))
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	vars, err := run(ctx, raw, m)
	if err != nil {
		return nil, fmt.Errorf("events/%s/%s: %w", dir, app.SetupFile, err)
	}
	return vars, nil
}

// run interprets the set-up file raw.
func run(ctx context.Context, raw []byte, m Makers) (map[string]string, error) {
	var s setup
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	known, err := builtins()
	if err != nil {
		return nil, err
	}
	vars := map[string]string{}
	for k, v := range s.Values {
		if vars[k], err = fill(v, known); err != nil {
			return nil, fmt.Errorf("value of %s: %w", k, err)
		}
	}
	maps.Copy(known, vars)
	for _, c := range s.Creates {
		body, err := fillJSON(c.Body, known)
		if err != nil {
			return nil, fmt.Errorf("POST %s: %w", c.Path, err)
		}
		got, err := m.Create(ctx, c.Path, body)
		if err != nil {
			return nil, err
		}
		for p, field := range c.Answer {
			v, _ := got[field].(string)
			if v == "" {
				return nil, fmt.Errorf("POST %s answered no %s for %s", c.Path, field, p)
			}
			vars[p], known[p] = v, v
		}
	}
	if len(s.Reported) > 0 {
		if m.Report == nil {
			return nil, errors.New("a reported session is asked for, and nothing here reports one")
		}
		got, err := m.Report(ctx)
		if err != nil {
			return nil, err
		}
		for p, field := range s.Reported {
			if got[field] == "" {
				return nil, fmt.Errorf("the reported session has no %s for %s", field, p)
			}
			vars[p] = got[field]
		}
	}
	return vars, nil
}

// builtins are the values of the placeholders every set-up may use.
func builtins() (map[string]string, error) {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	key, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, err
	}
	out := maps.Clone(fixtures)
	out[Unique] = strconv.FormatInt(unique(), 10)
	out[UniqueSSHKey] = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))
	return out, nil
}

// unique returns a number above every one it returned before and no less than the time in
// nanoseconds, so that runs in other processes get others too.
func unique() int64 {
	for {
		prev := last.Load()
		n := max(prev+1, time.Now().UnixNano())
		if last.CompareAndSwap(prev, n) {
			return n
		}
	}
}

// fill replaces the placeholders of known in s; one left over is an error.
func fill(s string, known map[string]string) (string, error) {
	var missing string
	out := placeholder.ReplaceAllStringFunc(s, func(p string) string {
		if v, ok := known[p]; ok {
			return v
		}
		missing = p
		return p
	})
	if missing != "" {
		return "", fmt.Errorf("nothing fills %s", missing)
	}
	return out, nil
}

// fillJSON is v (a decoded JSON value) with fill applied to each string in it.
func fillJSON(v any, known map[string]string) (any, error) {
	switch v := v.(type) {
	case string:
		return fill(v, known)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			f, err := fillJSON(e, known)
			if err != nil {
				return nil, err
			}
			out[k] = f
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			f, err := fillJSON(e, known)
			if err != nil {
				return nil, err
			}
			out[i] = f
		}
		return out, nil
	}
	return v, nil
}
