package samples

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/app"
)

const root = "../../.."

// fake answers every create with an id and an address of its own, and records the creates
// and the sessions reported.
type fake struct {
	creates  []string
	reported int
}

func (f *fake) create(_ context.Context, path string, body any) (map[string]any, error) {
	f.creates = append(f.creates, fmt.Sprintf("POST %s %v", path, body))
	n := len(f.creates)
	return map[string]any{"id": fmt.Sprintf("fake_%d", n), "addr": fmt.Sprintf("%d.tcp.example.com:10000", n)}, nil
}

func (f *fake) report(context.Context) (map[string]string, error) {
	f.reported++
	return map[string]string{"session_id": "ts_fake", "tunnel_id": "tn_fake", "public_url": "https://fake.example.com"}, nil
}

func (f *fake) makers() Makers { return Makers{Create: f.create, Report: f.report} }

// Each function's set-up fills every placeholder its samples hold besides the walk's own (the
// token and the ids the walk creates), and each placeholder it fills is held by a sample.
func TestSetupsFillTheirSamples(t *testing.T) {
	walk := []string{app.TokenPlaceholder, app.IDPlaceholder, app.ChildIDPlaceholder, app.ParentIDPlaceholder}
	withSetup := 0
	for _, f := range app.Functions() {
		files, err := app.SampleFiles(root, f.Dir)
		if err != nil {
			t.Fatal(err)
		}
		vars, err := Setup(t.Context(), root, f.Dir, (&fake{}).makers())
		if err != nil {
			t.Fatal(err)
		}
		if len(vars) > 0 {
			withSetup++
		}
		held := map[string]bool{}
		for _, file := range files {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range placeholder.FindAllString(string(raw), -1) {
				held[p] = true
				if _, ok := vars[p]; !ok && !slices.Contains(walk, p) {
					t.Errorf("%s holds %s, which events/%s/%s does not fill", file, p, f.Dir, app.SetupFile)
				}
			}
		}
		for p := range vars {
			if !held[p] {
				t.Errorf("events/%s/%s fills %s, which no sample of it holds", f.Dir, app.SetupFile, p)
			}
		}
	}
	if withSetup < 10 {
		t.Errorf("only %d functions have a set-up: the check proves little", withSetup)
	}
}

// A set-up's creates go in order, each body filled with the values and the earlier answers.
func TestSetupCreatesInOrder(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, `{"values": {"{{name}}": "n-{{unique}}"},
		"creates": [{"path": "/a", "body": {"name": "{{name}}", "n": 3}, "answer": {"{{a_id}}": "id"}},
		            {"path": "/b", "body": {"refs": ["{{a_id}}"], "pem": "{{fixture_ca_pem}}"}, "answer": {"{{b_addr}}": "addr"}}]}`)
	f := &fake{}
	vars, err := Setup(t.Context(), dir, "x", f.makers())
	if err != nil {
		t.Fatal(err)
	}
	name := vars["{{name}}"]
	if !strings.HasPrefix(name, "n-") || strings.Contains(name, "{{") {
		t.Errorf("{{name}} is %q, want n-<unique>", name)
	}
	if vars["{{a_id}}"] != "fake_1" || vars["{{b_addr}}"] != "2.tcp.example.com:10000" {
		t.Errorf("answers filled %v, want fake_1 and 2.tcp.example.com:10000", vars)
	}
	want := []string{fmt.Sprintf("POST /a map[n:3 name:%s]", name), fmt.Sprintf("POST /b map[pem:%s refs:[fake_1]]", fixtureCA)}
	if !slices.Equal(f.creates, want) {
		t.Errorf("creates %q, want %q", f.creates, want)
	}
	again, err := Setup(t.Context(), dir, "x", (&fake{}).makers())
	if err != nil {
		t.Fatal(err)
	}
	if again["{{name}}"] == name {
		t.Errorf("two set-ups both got %s: {{unique}} is not unique", name)
	}
}

// A set-up that names a placeholder nothing fills, an answer field the create did not return or
// a field of its own that does not exist is refused, naming it; a function without one gets
// no values.
func TestSetupRefusesWhatItCannotFill(t *testing.T) {
	for body, want := range map[string]string{
		`{"values": {"{{a}}": "{{uniqe}}"}}`:                                    "nothing fills {{uniqe}}",
		`{"creates": [{"path": "/a", "body": {"x": "{{b}}"}}]}`:                 "nothing fills {{b}}",
		`{"creates": [{"path": "/a", "body": {}, "answer": {"{{a}}": "url"}}]}`: "POST /a answered no url for {{a}}",
		`{"value": {}}`: `unknown field "value"`,
	} {
		dir := t.TempDir()
		write(t, dir, body)
		_, err := Setup(t.Context(), dir, "x", (&fake{}).makers())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %s", body, err, want)
		}
	}
	vars, err := Setup(t.Context(), t.TempDir(), "x", (&fake{}).makers())
	if err != nil || len(vars) != 0 {
		t.Errorf("no set-up file: %v, %v; want no values", vars, err)
	}
}

// A set-up that asks for a reported session gets its fields once, and is refused, naming what
// is missing, by a caller that reports none or when the session lacks the field.
func TestSetupReportsASession(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, `{"reported": {"{{id}}": "tunnel_id", "{{url}}": "public_url"}}`)
	f := &fake{}
	vars, err := Setup(t.Context(), dir, "x", f.makers())
	if err != nil || vars["{{id}}"] != "tn_fake" || vars["{{url}}"] != "https://fake.example.com" || f.reported != 1 || len(f.creates) != 0 {
		t.Errorf("reported set-up: %v, %v after %d reports and creates %q; want the tunnel's id and URL from one report", vars, err, f.reported, f.creates)
	}
	if _, err := Setup(t.Context(), dir, "x", Makers{Create: f.create}); err == nil || !strings.Contains(err.Error(), "nothing here reports one") {
		t.Errorf("without a reporter: %v, want a refusal", err)
	}
	write(t, dir, `{"reported": {"{{id}}": "tunnel"}}`)
	if _, err := Setup(t.Context(), dir, "x", f.makers()); err == nil || !strings.Contains(err.Error(), "no tunnel for {{id}}") {
		t.Errorf("a field the session lacks: %v, want a refusal naming it", err)
	}
}

// The fixtures are what their placeholders say, valid for long after any run: the CA a CA, the
// certificate the key's, the request signed by its key.
func TestFixtures(t *testing.T) {
	block := func(s, typ string) []byte {
		b, rest := pem.Decode([]byte(s))
		if b == nil || b.Type != typ || len(strings.TrimSpace(string(rest))) > 0 {
			t.Fatalf("not one PEM %s:\n%s", typ, s)
		}
		return b.Bytes
	}
	horizon := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	ca, err := x509.ParseCertificate(block(fixtureCA, "CERTIFICATE"))
	if err != nil || !ca.IsCA || ca.NotAfter.Before(horizon) {
		t.Errorf("the CA fixture: %v, CA %v, valid to %v", err, ca != nil && ca.IsCA, ca.NotAfter)
	}
	cert, err := x509.ParseCertificate(block(fixtureCert, "CERTIFICATE"))
	if err != nil || cert.IsCA || cert.NotAfter.Before(horizon) || cert.VerifyHostname("sample.example.com") != nil {
		t.Fatalf("the certificate fixture: %v", err)
	}
	key, err := x509.ParsePKCS8PrivateKey(block(fixtureKey, "PRIVATE KEY"))
	if err != nil {
		t.Fatal(err)
	}
	if signer, ok := key.(crypto.Signer); !ok || !cert.PublicKey.(interface{ Equal(crypto.PublicKey) bool }).Equal(signer.Public()) {
		t.Error("the key fixture is not the certificate fixture's key")
	}
	csr, err := x509.ParseCertificateRequest(block(fixtureCSR, "CERTIFICATE REQUEST"))
	if err != nil || csr.CheckSignature() != nil {
		t.Errorf("the request fixture: %v", err)
	}
}

func write(t *testing.T, root, setup string) {
	t.Helper()
	dir := filepath.Join(root, "events", "x")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, app.SetupFile), []byte(setup), 0o644); err != nil {
		t.Fatal(err)
	}
}
