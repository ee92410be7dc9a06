package testkit

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// Items scans the stack's whole table (tests only: no request path scans). It takes no
// testing.TB so that a TestMain can check the table after the whole suite.
func (s *Stack) Items(ctx context.Context) ([]store.Item, error) {
	var out []store.Item
	// The store's client interface leaves Scan out on purpose; the real client has it.
	scanner, ok := s.DB.Client.(dynamodb.ScanAPIClient)
	if !ok {
		return nil, fmt.Errorf("testkit: the store's client %T cannot scan", s.DB.Client)
	}
	p := dynamodb.NewScanPaginator(scanner, &dynamodb.ScanInput{TableName: aws.String(s.DB.Table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
	}
	return out, nil
}

// PEMPrivateKeyMarker appears in every PEM-encoded private key, whatever its format.
var PEMPrivateKeyMarker = []byte("PRIVATE KEY")

// Needles are byte strings whose presence reveals a secret, with what each one is.
type Needles struct {
	mu   sync.Mutex
	list []needle
}

type needle struct {
	b    []byte
	what string
}

// Add records secret in the forms it could leak in: raw, base64 and hex.
func (n *Needles) Add(what string, secret []byte) {
	if len(secret) < 16 {
		return // too short to search for without false positives
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.list = append(n.list,
		needle{append([]byte(nil), secret...), what + " (raw)"},
		needle{[]byte(base64.StdEncoding.EncodeToString(secret)), what + " (base64)"},
		needle{[]byte(hex.EncodeToString(secret)), what + " (hex)"})
}

// AddKey records a private key: its PKCS#8 DER and its secret number (RSA private exponent and
// primes, ECDSA scalar, Ed25519 seed).
func (n *Needles) AddKey(what string, key any) {
	if der, err := x509.MarshalPKCS8PrivateKey(key); err == nil {
		n.Add(what+" PKCS#8", der)
	}
	switch k := key.(type) {
	case *rsa.PrivateKey:
		n.Add(what+" RSA d", k.D.Bytes())
		for i, p := range k.Primes {
			n.Add(fmt.Sprintf("%s RSA prime %d", what, i), p.Bytes())
		}
		n.Add(what+" PKCS#1", x509.MarshalPKCS1PrivateKey(k))
	case *ecdsa.PrivateKey:
		if b, err := k.Bytes(); err == nil {
			n.Add(what+" ECDSA scalar", b)
		}
		if der, err := x509.MarshalECPrivateKey(k); err == nil {
			n.Add(what+" SEC1", der)
		}
	case ed25519.PrivateKey:
		n.Add(what+" Ed25519 seed", k.Seed())
	}
}

// Find reports every needle (and the PEM private-key marker) found in b.
func (n *Needles) Find(b []byte) []string {
	var out []string
	if bytes.Contains(b, PEMPrivateKeyMarker) {
		out = append(out, "PEM private-key marker")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, nd := range n.list {
		if bytes.Contains(b, nd.b) {
			out = append(out, nd.what)
		}
	}
	return out
}

// Len is the number of needles recorded.
func (n *Needles) Len() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.list)
}

// FindInItem reports every needle found in any attribute value of it, at any depth.
func (n *Needles) FindInItem(it store.Item) []string {
	var out []string
	var walk func(path string, v types.AttributeValue)
	walk = func(path string, v types.AttributeValue) {
		var found []string
		switch a := v.(type) {
		case *types.AttributeValueMemberS:
			found = n.Find([]byte(a.Value))
		case *types.AttributeValueMemberB:
			found = n.Find(a.Value)
		case *types.AttributeValueMemberSS:
			for _, s := range a.Value {
				found = append(found, n.Find([]byte(s))...)
			}
		case *types.AttributeValueMemberBS:
			for _, b := range a.Value {
				found = append(found, n.Find(b)...)
			}
		case *types.AttributeValueMemberM:
			for k, e := range a.Value {
				walk(path+"."+k, e)
			}
		case *types.AttributeValueMemberL:
			for i, e := range a.Value {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		}
		for _, f := range found {
			out = append(out, path+": "+f)
		}
	}
	for k, v := range it {
		walk(k, v)
	}
	return out
}

// LogCapture collects every log line the stack writes, so a test can check none leaks a secret.
type LogCapture struct{ metrics.Buffer }

// CaptureLogs routes the stack's request and handler logs (at debug level and above) into a
// new LogCapture.
func (s *Stack) CaptureLogs() *LogCapture {
	l := &LogCapture{}
	lg := slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s.Deps.Kit.Log, s.Deps.Server.Log = lg, lg
	return l
}

// Items returns the string attributes of every item of the account: its resources and its
// audit log (tests count them to prove a refused request stored nothing).
func (a *Account) Items(t testing.TB) []map[string]string {
	t.Helper()
	items, err := a.s.Items(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, it := range items {
		m := map[string]string{}
		for k, v := range it {
			if sv, ok := v.(*types.AttributeValueMemberS); ok {
				m[k] = sv.Value
			}
		}
		if strings.HasPrefix(m["pk"], "A#"+a.AccountID+"#") || m["pk"] == "E#"+a.AccountID {
			out = append(out, m)
		}
	}
	return out
}

// Scan reports every needle found in the table's items (naming each item by its sort key) and
// in the captured logs: the check the certificate suites run after their tests.
func (n *Needles) Scan(items []store.Item, logs *LogCapture) []string {
	var out []string
	for _, it := range items {
		for _, f := range n.FindInItem(it) {
			sk, _ := it[store.AttrSK].(*types.AttributeValueMemberS)
			out = append(out, fmt.Sprintf("item %s: %s", sk.Value, f))
		}
	}
	if logs != nil {
		for _, f := range n.Find(logs.Bytes()) {
			out = append(out, "log: "+f)
		}
	}
	return out
}

// AssertAbsent fails the test if body holds any needle, such as a response leaking a key.
func (n *Needles) AssertAbsent(t testing.TB, body []byte) {
	t.Helper()
	if found := n.Find(body); len(found) > 0 {
		t.Fatalf("response leaks %v", found)
	}
}

// SecretSuite is what a suite that stores private keys keeps: the package's stack with its logs
// captured, and the needles of every key the suite made, scanned for after the whole suite.
type SecretSuite struct {
	once  sync.Once
	Stack *Stack
	Logs  *LogCapture
	// Needles are the private keys the suite made, in every form they could leak in.
	Needles Needles
	// Sealed, when set, names the attribute that holds a sealed key: Main fails when no item
	// of the table has it, since the scan would then prove nothing.
	Sealed string
}

// Start returns the package's shared stack, capturing its logs for the final scan.
func (s *SecretSuite) Start(t testing.TB, families ...*resource.Descriptor) *Stack {
	st := Shared(t, families...)
	s.once.Do(func() { s.Stack, s.Logs = st, st.CaptureLogs() })
	return st
}

// Main runs the suite (see Main), then fails it when any needle is in the table or the logs.
// check, when not nil, runs first, on every item of the table: it may record more needles
// (keys read back from the table) and reports problems of its own.
func (s *SecretSuite) Main(m *testing.M, check func(ctx context.Context, items []store.Item) []string) {
	Main(m, func(st *Stack) error {
		ctx := context.Background()
		items, err := st.Items(ctx)
		if err != nil {
			return err
		}
		var problems []string
		if check != nil {
			problems = check(ctx, items)
		}
		if s.Sealed != "" && !slices.ContainsFunc(items, func(it store.Item) bool { _, ok := it[s.Sealed]; return ok }) {
			problems = append(problems, "no item holds a sealed "+s.Sealed+": the scan would prove nothing")
		}
		if s.Needles.Len() == 0 {
			problems = append(problems, "no private keys were recorded: the scan would prove nothing")
		}
		problems = append(problems, s.Needles.Scan(items, s.Logs)...)
		if len(problems) > 0 {
			return errors.New("private key material found after the suite:\n  " + strings.Join(problems, "\n  "))
		}
		return nil
	})
}
