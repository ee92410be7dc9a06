package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/testing/openapi"
	"tunnelapi/shared/testing/samples"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/certs"
	"tunnelapi/shared/workers/delivery"
	"tunnelapi/shared/workers/frpplugin"
	"tunnelapi/shared/workers/scheduler"
	"tunnelapi/shared/workers/usage"
)

const root = "../.."

// The sample events in events/<dir>/ are fed, in name order, to the function's real Lambda
// handler, built as its main builds it (only the settings its families read): create, list,
// get, update, delete, each with its documented status.
func TestSampleEventsThroughLambdaHandlers(t *testing.T) {
	s, a := testkit.AppAccount(t)
	for _, f := range app.Functions() {
		t.Run(f.Dir, func(t *testing.T) {
			files, err := app.SampleFiles(root, f.Dir)
			if err != nil {
				t.Fatal(err)
			}
			deps, _ := s.Instance(t, f.Families...)
			handler := deps.Handler(f.Families...)
			vars, err := samples.Setup(t.Context(), root, f.Dir, testkit.SampleMakers(t, a))
			if err != nil {
				t.Fatal(err)
			}
			vars[app.TokenPlaceholder] = a.Token
			covered := map[string]bool{}
			for _, file := range files {
				ev := testkit.ReadSample(t, file, vars)
				res, err := handler(t.Context(), ev)
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				want := app.SampleStatusOf(f.Families, ev.RequestContext.HTTP.Method, ev.RouteKey)
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
					if id := app.SampleCreated(vars, ev.RouteKey, []byte(res.Body)); id != "" && id == vars[app.IDPlaceholder] {
						checkUpdateForm(t, a, f, id)
					}
					if uri := body["uri"].(string); !strings.HasPrefix(uri, "https://"+ev.RequestContext.DomainName+"/") {
						t.Fatalf("%s: uri %s is not on the API's own host", file, uri)
					}
				}
				if res.Body != "" {
					checkWireShape(t, file, ev.RouteKey, []byte(res.Body))
				}
				covered[ev.RouteKey] = true
			}
			for _, r := range testkit.FunctionRoutes(f) {
				if !covered[r] {
					t.Errorf("no sample event in events/%s for %s", f.Dir, r)
				}
			}
		})
	}
}

// workerHandlers feed one sample event (raw JSON) to a worker's real Lambda handler, built on
// the test stack; a worker without an entry fails the test.
func workerHandlers(t *testing.T, s *testkit.Stack) map[string]func(ctx context.Context, raw []byte) error {
	q := testkit.NewQueues(t, nil)
	ec := testkit.Config(t, config.LoadEventWorker)
	ec.QueueURL, ec.DLQURL = q.Events, q.DLQ
	w := delivery.New(s.DB, q.Client, s.Deps.Kit.Seal, ec.AWSConfig(), ec)
	w.Log, w.Metrics = s.Deps.Kit.Log, testkit.Metrics()
	cc := testkit.Config(t, config.LoadCertWorker)
	cc.QueueURL = q.Events
	cw, err := certs.New(s.DB, q.Client, s.Deps.Kit.Seal, cc, s.Deps.Kit.Log)
	if err != nil {
		t.Fatal(err)
	}
	cw.Metrics = testkit.Metrics()
	sqsHandler := func(h queue.Handler) func(ctx context.Context, raw []byte) error {
		return func(ctx context.Context, raw []byte) error {
			var ev events.SQSEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				return err
			}
			res, err := h(ctx, ev)
			if err != nil {
				return err
			}
			if len(res.BatchItemFailures) > 0 {
				return fmt.Errorf("batch item failures %v", res.BatchItemFailures)
			}
			return nil
		}
	}
	return map[string]func(context.Context, []byte) error{
		"cert_worker": sqsHandler(cw.Handle),
		"scheduler": func(ctx context.Context, raw []byte) error {
			var ev events.EventBridgeEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				return err
			}
			_, err := (&scheduler.Scheduler{DB: s.DB}).Run(ctx, time.Now())
			return err
		},
		"event_worker": sqsHandler(w.Handle),
		// The plugin's samples name no key the table holds: each answers 401, never a 5xx.
		"tunnel_plugin": func(ctx context.Context, raw []byte) error {
			var ev events.APIGatewayV2HTTPRequest
			if err := json.Unmarshal(raw, &ev); err != nil {
				return err
			}
			p := &frpplugin.Plugin{DB: s.DB, Domains: *s.Deps.Kit.Settings.Domains, Log: s.Deps.Kit.Log}
			res, err := p.Lambda()(ctx, ev)
			if err == nil && res.StatusCode != http.StatusUnauthorized {
				err = fmt.Errorf("status %d, want 401: %s", res.StatusCode, res.Body)
			}
			return err
		},
		"usage_worker": func(ctx context.Context, raw []byte) error {
			var ev events.CloudwatchLogsEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				return err
			}
			// The samples' log group is the deployed stack "tunnelapi"'s, in the samples' account.
			w := &usage.Worker{DB: s.DB, Log: testkit.Logger(), Sources: &usage.Sources{Owner: "123456789012", Stack: "tunnelapi"}}
			return w.Handle(ctx, ev)
		},
	}
}

// The sample events in events/<dir>/ of every worker go through its real Lambda handler and
// succeed (no batch item failures).
func TestWorkerSampleEvents(t *testing.T) {
	s := testkit.App(t)
	handlers := workerHandlers(t, s)
	for _, w := range app.Workers {
		t.Run(w.Dir, func(t *testing.T) {
			h := handlers[w.Dir]
			if h == nil {
				t.Fatalf("no sample-event handler for worker %s", w.Dir)
			}
			files, _ := filepath.Glob(filepath.Join(root, "events", w.Dir, "*.json"))
			if len(files) == 0 {
				t.Fatalf("no sample events in events/%s", w.Dir)
			}
			sort.Strings(files)
			for _, file := range files {
				raw, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				if err := h(t.Context(), raw); err != nil {
					t.Fatalf("%s: %v", file, err)
				}
			}
		})
	}
}

// checkWireShape compares a response body's fields with the OpenAPI schema of its route: every
// field the platform's clients read is present and nothing else is sent; for a list, the same
// holds for each item.
func checkWireShape(t *testing.T, file, route string, body []byte) {
	t.Helper()
	method, path, _ := strings.Cut(route, " ")
	schema, ok := openapi.ResponseSchema(method, path)
	if !ok {
		return
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, p := range compareFields(file, schema, got) {
		t.Error(p)
	}
}

// omitted reports whether a response may leave out the member name of an object of schema,
// as the platform's responses do: description and metadata when empty, a reserved domain's
// resolves_to when it has none, and every member of an endpoint but a cloud endpoint's (domain
// only when there is one).
func omitted(schema openapi.Schema, name string) bool {
	if name == "description" || name == "metadata" || schema.Name == "ReservedDomain" && name == "resolves_to" {
		return true
	}
	_, endpoint := schema.Member("upstream_url")
	return endpoint && !slices.Contains(testkit.CloudEndpointMembers, name)
}

// recordedBeyondSchema are the members, by schema, that the platform's recorded responses carry
// though its OpenAPI description does not list them: the retired module policy (null) on TLS
// and TCP edges and HTTPS routes, and a SAML module's idp_metadata_url.
var recordedBeyondSchema = map[string][]string{
	"TLSEdge": {"policy"}, "TCPEdge": {"policy"}, "HTTPSEdgeRoute": {"policy"},
	"EndpointSAML": {"idp_metadata_url"},
}

// compareFields lists how got differs from schema's fields (recursing into list items).
func compareFields(where string, schema openapi.Schema, got map[string]any) []string {
	var problems []string
	for _, m := range schema.Members {
		v, ok := got[m.Name]
		if !ok {
			if !omitted(schema, m.Name) {
				problems = append(problems, fmt.Sprintf("%s: field %q of the platform's schema is missing", where, m.Name))
			}
			continue
		}
		items, ok := openapi.SchemaNamed(m.Ref)
		if m.Type != "array" || !ok {
			continue
		}
		if list, ok := v.([]any); ok && len(list) > 0 {
			if first, ok := list[0].(map[string]any); ok {
				problems = append(problems, compareFields(where+" "+m.Name+"[0]", items, first)...)
			}
		}
	}
	for name := range got {
		if _, ok := schema.Member(name); !ok && !slices.Contains(recordedBeyondSchema[schema.Name], name) {
			problems = append(problems, fmt.Sprintf("%s: field %q is not in the platform's schema", where, name))
		}
	}
	return problems
}

// The shape check finds a missing field, an extra one, and the same in a list's items.
func TestWireShapeCheckCatchesDifferences(t *testing.T) {
	schema, ok := openapi.ResponseSchema("GET", "/api_keys")
	if !ok {
		t.Fatal("GET /api_keys has no response schema")
	}
	body := map[string]any{"uri": "u", "next_page_uri": nil, "extra": 1,
		"keys": []any{map[string]any{"id": "ak_x", "uri": "u", "description": "", "metadata": "", "created_at": "t", "token": nil}}}
	problems := strings.Join(compareFields("list", schema, body), "\n")
	for _, want := range []string{`field "extra" is not`, `keys[0]: field "owner_id" of the platform's schema is missing`} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems %q lack %q", problems, want)
		}
	}
}

// checkUpdateForm sends each field of the PATCH form the platform documents for f's item route,
// one at a time and with a zero value, to the item id: none may be refused as unknown (214), and
// nothing may fail with a 5xx.
func checkUpdateForm(t *testing.T, a *testkit.Account, f app.Function, id string) {
	t.Helper()
	for _, route := range testkit.FunctionRoutes(f) {
		method, path, _ := strings.Cut(route, " ")
		collection, ok := strings.CutSuffix(path, "/{id}")
		if method != "PATCH" || strings.Contains(collection, "{") || !ok {
			continue
		}
		form, _ := openapi.Update(collection)
		for _, m := range form.Members {
			zero := m.Zero()
			if m.Name == "id" { // the JavaScript client repeats the path id in the body
				zero = id
			}
			res := a.Do(t, "PATCH", strings.Replace(path, "{id}", id, 1), map[string]any{m.Name: zero})
			var env struct {
				Code string `json:"error_code"`
			}
			json.Unmarshal(res.Body, &env)
			if res.Status >= 500 || env.Code == "ERR_NGROK_214" {
				t.Errorf("PATCH %s with documented field %q: %d %s", path, m.Name, res.Status, res.Body)
			}
		}
	}
}
