package app_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"go/ast"
	"go/parser"
	"go/token"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"golang.org/x/crypto/ssh"
	"gopkg.in/yaml.v3"

	"tunnelapi/shared/api"
	"tunnelapi/shared/app"
	"tunnelapi/shared/testkit"
)

const root = "../.."

// recorder is an api.Mux that keeps the patterns registered on it.
type recorder struct{ routes []string }

func (r *recorder) Handle(pattern string, _ http.Handler) { r.routes = append(r.routes, pattern) }

func codeRoutes(f app.Function) []string {
	rec := &recorder{}
	f.Register(nil, rec, &api.Server{})
	sort.Strings(rec.routes)
	return rec.routes
}

type template struct {
	Resources map[string]struct {
		Type       string `yaml:"Type"`
		Properties struct {
			Events map[string]struct {
				Type       string `yaml:"Type"`
				Properties struct {
					Method string `yaml:"Method"`
					Path   string `yaml:"Path"`
				} `yaml:"Properties"`
			} `yaml:"Events"`
		} `yaml:"Properties"`
	} `yaml:"Resources"`
}

func templateRoutes(t *testing.T) map[string][]string {
	b, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tpl template
	if err := yaml.Unmarshal(b, &tpl); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for name, res := range tpl.Resources {
		if res.Type != "AWS::Serverless::Function" {
			continue
		}
		for _, ev := range res.Properties.Events {
			if ev.Type == "HttpApi" {
				out[name] = append(out[name], ev.Properties.Method+" "+ev.Properties.Path)
			}
		}
		sort.Strings(out[name])
	}
	return out
}

// Every route in code is routed to its own function in template.yaml, and the reverse.
func TestTemplateRoutesMatchCode(t *testing.T) {
	tpl := templateRoutes(t)
	seen := map[string]bool{}
	for _, f := range app.Functions {
		seen[f.Name] = true
		code := codeRoutes(f)
		if len(code) == 0 {
			t.Errorf("%s registers no routes", f.Name)
		}
		if !reflect.DeepEqual(code, tpl[f.Name]) {
			t.Errorf("%s: routes in code %v, in template.yaml %v", f.Name, code, tpl[f.Name])
		}
	}
	for name, routes := range tpl {
		if len(routes) > 0 && !seen[name] {
			t.Errorf("template.yaml routes %v to %s, which no code serves", routes, name)
		}
	}
	// No route may be served by two functions.
	owner := map[string]string{}
	for _, f := range app.Functions {
		for _, r := range codeRoutes(f) {
			if o, dup := owner[r]; dup {
				t.Errorf("%s is registered by %s and %s", r, o, f.Name)
			}
			owner[r] = f.Name
		}
	}
}

// Each functions/<dir>/main.go serves exactly the registration app.Functions lists for it, and
// the Makefile builds it under the same logical id.
func TestMainsAndMakefileMatchFunctions(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range app.Functions {
		want := runtime.FuncForPC(reflect.ValueOf(f.Register).Pointer()).Name()
		got := mainRegistration(t, filepath.Join(root, "functions", f.Dir, "main.go"))
		if got != want {
			t.Errorf("functions/%s/main.go serves %q, app.Functions says %q", f.Dir, got, want)
		}
		if !strings.Contains(string(mk), f.Name+":"+f.Dir) {
			t.Errorf("Makefile FUNCTIONS lacks %s:%s", f.Name, f.Dir)
		}
	}
}

// mainRegistration returns "<import path>.<Func>" of the argument passed to lambdahttp.Main.
func mainRegistration(t *testing.T, path string) string {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string]string{}
	for _, im := range file.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		imports[filepath.Base(p)] = p
	}
	var out string
	ast.Inspect(file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Main" && len(call.Args) == 1 {
			if arg, ok := call.Args[0].(*ast.SelectorExpr); ok {
				out = imports[arg.X.(*ast.Ident).Name] + "." + arg.Sel.Name
			}
		}
		return true
	})
	return out
}

// The sample events in events/<dir>/ are fed, in name order, to the function's real Lambda
// handler: create, list, get, update, delete, each with its documented status.
func TestSampleEventsThroughLambdaHandlers(t *testing.T) {
	s := testkit.Shared(t, app.Registers()...)
	a := s.NewAccount(t)
	for _, f := range app.Functions {
		t.Run(f.Dir, func(t *testing.T) {
			files, _ := filepath.Glob(filepath.Join(root, "events", f.Dir, "*.json"))
			if len(files) == 0 {
				t.Fatalf("no sample events in events/%s", f.Dir)
			}
			sort.Strings(files)
			handler := s.Deps.Handler(f.Register)
			vars := map[string]string{"{{token}}": a.Token}
			if setup, ok := sampleSetup[f.Dir]; ok {
				for k, v := range setup(t, a) {
					vars["{{"+k+"}}"] = v
				}
			}
			covered := map[string]bool{}
			for _, file := range files {
				raw, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				text := string(raw)
				for k, v := range vars {
					text = strings.ReplaceAll(text, k, inBody(v))
				}
				var ev events.APIGatewayV2HTTPRequest
				if err := json.Unmarshal([]byte(text), &ev); err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				res, err := handler(context.Background(), ev)
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				want := map[string]int{"POST": 201, "GET": 200, "PATCH": 200, "PUT": 200, "DELETE": 204}[ev.RequestContext.HTTP.Method]
				if res.StatusCode != want {
					t.Fatalf("%s: status %d, want %d: %s", file, res.StatusCode, want, res.Body)
				}
				if res.Headers["Ngrok-Operation-Id"] == "" {
					t.Fatalf("%s: no Ngrok-Operation-Id header", file)
				}
				if want == 201 {
					var body map[string]any
					if err := json.Unmarshal([]byte(res.Body), &body); err != nil {
						t.Fatal(err)
					}
					vars["{{id}}"] = body["id"].(string)
					if uri := body["uri"].(string); !strings.HasPrefix(uri, "https://"+ev.RequestContext.DomainName+"/") {
						t.Fatalf("%s: uri %s is not on the API's own host", file, uri)
					}
				}
				covered[ev.RouteKey] = true
			}
			for _, r := range codeRoutes(f) {
				if !covered[r] {
					t.Errorf("no sample event in events/%s for %s", f.Dir, r)
				}
			}
		})
	}
}

// sampleSetup makes the prerequisites of a function's sample events (a resource the create
// refers to, a key pair made at test time) and names them as placeholders: {{name}} in an
// event is replaced by the value.
var sampleSetup = map[string]func(t *testing.T, a *testkit.Account) map[string]string{
	"tls_certificates": func(t *testing.T, a *testkit.Account) map[string]string {
		cert, key := selfSigned(t, false)
		return map[string]string{"cert_pem": cert, "key_pem": key}
	},
	"certificate_authorities": func(t *testing.T, a *testkit.Account) map[string]string {
		cert, _ := selfSigned(t, true)
		return map[string]string{"ca_pem": cert}
	},
	"ssh_user_certificates": sshSetup,
	"ssh_host_certificates": sshSetup,
}

func sshSetup(t *testing.T, a *testkit.Account) map[string]string {
	ca := a.Do(t, "POST", "/ssh_certificate_authorities", map[string]any{"private_key_type": "ed25519"}).Expect(t, http.StatusCreated)
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"ssh_ca_id": ca["id"].(string), "ssh_public_key": strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp))) + " sample@ci"}
}

// selfSigned returns a fresh self-signed ECDSA certificate (a CA when ca) and its PKCS#8 key.
func selfSigned(t *testing.T, ca bool) (certPEM, keyPEM string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "sample.example.com"},
		DNSNames: []string{"sample.example.com"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: ca,
	}
	if ca {
		tpl.KeyUsage |= x509.KeyUsageCertSign
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}))
}

// inBody escapes v for where placeholders sit: inside a JSON string (the request body) that is
// itself a JSON string of the event. Ids and tokens come out unchanged.
func inBody(v string) string {
	once, _ := json.Marshal(v)
	twice, _ := json.Marshal(string(once[1 : len(once)-1]))
	return string(twice[1 : len(twice)-1])
}
