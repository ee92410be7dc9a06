package samlocal_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"go/parser"
	"go/token"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"tunnelapi/infra/samlocal"
	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/serve"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/delivery"
)

const root = "../.."

// declaredEnv reads, independently of the package, the environment variables template.yaml
// gives each function: Globals and its own.
func declaredEnv(t *testing.T) map[string][]string {
	return testkit.TemplateVariables(t, filepath.Join(root, "template.yaml"))
}

// containerEnv makes the process environment exactly what `sam local` gives function fn's
// container: its AWS_* variables (the placeholders it uses when the host has no credentials)
// and the env-vars file's entry for fn, nothing else. ContainerHost becomes localhost, the one
// change: this machine has no Docker to resolve that name, and a host name other than the
// 127.0.0.1 the stack was set up with keeps the check honest (queues must answer under it).
func containerEnv(t *testing.T, file map[string]string) {
	saved := os.Environ()
	t.Cleanup(func() {
		os.Clearenv()
		for _, kv := range saved {
			k, v, _ := strings.Cut(kv, "=")
			os.Setenv(k, v)
		}
	})
	os.Clearenv()
	for k, v := range map[string]string{"AWS_SAM_LOCAL": "true", "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
		"AWS_ACCESS_KEY_ID": "defaultkey", "AWS_SECRET_ACCESS_KEY": "defaultsecret"} {
		os.Setenv(k, v)
	}
	for k, v := range file {
		os.Setenv(k, strings.ReplaceAll(v, samlocal.ContainerHost, "localhost"))
	}
}

// What `make sam-local` writes lets every function run as `sam local` runs it: the env-vars
// file sets every variable the template declares for every function of shared/app, pointing
// at the local emulators as the containers reach them, and each HTTP function's real Lambda
// handler, built from exactly that environment, answers each of its filled sample events in
// name order with the documented status; the workers handle theirs; committed events reach the
// stack's queue under the containers' host name.
func TestSamLocalEnvironmentRunsEveryFunction(t *testing.T) {
	st := testkit.Start(t, app.Families...)
	a := st.NewAccount(t)
	q := testkit.NewQueues(t, nil)  // the queues the env-vars file names
	cq := testkit.NewQueues(t, nil) // the certificate jobs' pair
	key, err := samlocal.LoadSealKey(testkit.Config(t, config.LoadHTTP).Seal.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	ddb, sqsEP := os.Getenv("DYNAMODB_ENDPOINT"), os.Getenv("SQS_ENDPOINT")
	settings, err := samlocal.LocalSettings(config.Env)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	err = samlocal.Write(context.Background(), samlocal.Options{
		Root: root, Out: out, Token: a.Token, Deps: st.Deps,
		Stack: samlocal.Stack{DynamoDBEndpoint: ddb, SQSEndpoint: sqsEP, Table: st.DB.Table, SealKey: key, Settings: settings,
			Queues: map[string]string{"EVENTS_QUEUE_URL": q.Events, "EVENTS_DLQ_URL": q.DLQ,
				"CERT_JOBS_QUEUE_URL": cq.Events, "CERT_JOBS_DLQ_URL": cq.DLQ}},
	})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "env.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file map[string]map[string]string
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}

	// Coverage: exactly the declared variables of exactly the template's functions.
	declared := declaredEnv(t)
	var functions []string
	for _, f := range app.Functions() {
		functions = append(functions, f.Name)
	}
	for _, w := range app.Workers {
		functions = append(functions, w.Name)
	}
	functions = append(functions, app.Operator.Name)
	if got, want := slices.Sorted(maps.Keys(file)), slices.Sorted(maps.Keys(declared)); !slices.Equal(got, want) {
		t.Fatalf("env.json has functions %v, template.yaml %v", got, want)
	}
	for _, fn := range functions {
		if got := slices.Sorted(maps.Keys(file[fn])); !slices.Equal(got, declared[fn]) {
			t.Errorf("%s: env.json sets %v, template.yaml declares %v", fn, got, declared[fn])
		}
	}

	// Every endpoint is the running emulator's, under the containers' name for this machine.
	port := func(raw string) string { u, _ := url.Parse(raw); return u.Port() }
	emulators := []string{port(ddb), port(sqsEP)}
	// The certificate worker's: the stack's pebble and challtestsrv.
	for _, name := range []string{"ACME_DIRECTORY", "CHALLTESTSRV_URL"} {
		if u := os.Getenv(name); u != "" {
			emulators = append(emulators, port(u))
		}
	}
	for _, fn := range functions {
		env := file[fn]
		for name, want := range map[string]string{
			"DYNAMODB_ENDPOINT": "http://" + samlocal.ContainerHost + ":" + port(ddb),
			"SQS_ENDPOINT":      "http://" + samlocal.ContainerHost + ":" + port(sqsEP),
			"TABLE_NAME":        st.DB.Table,
			"SEAL_KMS_KEY_ID":   "",
		} {
			if env[name] != want {
				t.Errorf("%s: %s is %q, want %q", fn, name, env[name], want)
			}
		}
		if k, err := hex.DecodeString(env["SEAL_LOCAL_KEY"]); err != nil || len(k) != 32 {
			t.Errorf("%s: SEAL_LOCAL_KEY is not a 32-byte key in hex", fn)
		}
		for name, v := range env {
			if strings.Contains(v, "127.0.0.1") || strings.Contains(v, "localhost") {
				t.Errorf("%s: %s=%s names this machine's loopback, which a container cannot reach", fn, name, v)
			}
			if strings.Contains(v, "://") {
				u, err := url.Parse(v)
				if err != nil || u.Hostname() != samlocal.ContainerHost || !slices.Contains(emulators, u.Port()) {
					t.Errorf("%s: %s=%s is not an emulator as the containers reach it", fn, name, v)
				}
			}
		}
	}

	// Each HTTP function's real handler, from exactly that environment, on its filled samples.
	ctx := context.Background()
	placeholder := regexp.MustCompile(`\{\{[a-z_]+\}\}`)
	samples := func(t *testing.T, dir string) [][]byte {
		files, _ := filepath.Glob(filepath.Join(out, "events", dir, "*.json"))
		committed, err := app.SampleFiles(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != len(committed) {
			t.Fatalf("%d filled samples for %d committed ones", len(files), len(committed))
		}
		sort.Strings(files)
		var out [][]byte
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if p := placeholder.Find(b); p != nil {
				t.Fatalf("%s still holds %s", f, p)
			}
			out = append(out, b)
		}
		return out
	}
	for _, f := range app.Functions() {
		t.Run(f.Dir, func(t *testing.T) {
			evs := samples(t, f.Dir)
			containerEnv(t, file[f.Name])
			d, err := serve.NewDeps(ctx, testkit.Config(t, config.LoadHTTP), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			quiet := slog.New(slog.DiscardHandler)
			d.Kit.Log, d.Server.Log = quiet, quiet
			handler := d.Handler(f.Families...)
			for i, raw := range evs {
				var ev events.APIGatewayV2HTTPRequest
				if err := json.Unmarshal(raw, &ev); err != nil {
					t.Fatalf("sample %d: %v", i, err)
				}
				res, err := handler(ctx, ev)
				if err != nil {
					t.Fatalf("%s: %v", ev.RouteKey, err)
				}
				if want := app.SampleStatusOf(f.Families, ev.RequestContext.HTTP.Method, ev.RouteKey); res.StatusCode != want {
					t.Fatalf("%s (%s): status %d, want %d: %s", ev.RouteKey, ev.RawPath, res.StatusCode, want, res.Body)
				}
			}
		})
	}

	// No HTTP function is given a queue: committed events leave through the table's stream.
	for _, f := range app.Functions() {
		if u := file[f.Name]["EVENTS_QUEUE_URL"]; u != "" {
			t.Errorf("%s has EVENTS_QUEUE_URL %s", f.Name, u)
		}
	}

	// The workers, built from their environment, handle their samples.
	t.Run("event_worker", func(t *testing.T) {
		evs := samples(t, "event_worker")
		containerEnv(t, file["EventWorkerFunction"])
		w, err := delivery.FromConfig(ctx, testkit.Config(t, config.LoadEventWorker), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		for i, raw := range evs {
			var ev events.SQSEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatal(err)
			}
			res, err := w.Handle(ctx, ev)
			if err != nil || len(res.BatchItemFailures) > 0 {
				t.Fatalf("sample %d: %v, failures %v", i, err, res.BatchItemFailures)
			}
		}
	})
	// invoke-all.sh runs every filled sample with its function's logical id.
	script, err := os.ReadFile(filepath.Join(out, "invoke-all.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range app.Functions() {
		files, _ := filepath.Glob(filepath.Join(out, "events", f.Dir, "*.json"))
		for _, file := range files {
			line := "sam local invoke " + f.Name + " --env-vars " + samlocal.Dir + "/env.json --add-host " +
				samlocal.ContainerHost + ":host-gateway -e " + samlocal.Dir + "/events/" + f.Dir + "/" + filepath.Base(file)
			if !strings.Contains(string(script), line+"\n") {
				t.Errorf("invoke-all.sh lacks %q", line)
			}
		}
	}
}

// A template variable with no local value stops the generator, naming it, so a variable added to
// template.yaml cannot keep its AWS value under sam local unnoticed.
func TestEnvVarsRefusesAnUncoveredVariable(t *testing.T) {
	tpl := []byte("Globals:\n  Function:\n    Environment:\n      Variables:\n        TABLE_NAME: x\n" +
		"Resources:\n  F:\n    Type: AWS::Serverless::Function\n    Properties:\n      Environment:\n        Variables:\n          NEW_THING: y\n")
	_, err := samlocal.EnvVars(tpl, []string{"F"}, map[string]string{"TABLE_NAME": "t"})
	if err == nil || !strings.Contains(err.Error(), "F.NEW_THING") {
		t.Fatalf("err %v, want one naming F.NEW_THING", err)
	}
	env, err := samlocal.EnvVars(tpl, []string{"F"}, map[string]string{"TABLE_NAME": "t", "NEW_THING": "n", "UNUSED": "u"})
	if err != nil || len(env["F"]) != 2 || env["F"]["NEW_THING"] != "n" {
		t.Fatalf("env %v, %v", env, err)
	}
	if _, err := samlocal.EnvVars(tpl, []string{"Missing"}, nil); err == nil {
		t.Fatal("a function missing from the template was accepted")
	}
}

// Loopback URLs become the containers' name for this machine, port and path kept; others stay.
func TestContainerURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8000":                          "http://host.docker.internal:8000",
		"http://localhost:9324/000000000000/q":           "http://host.docker.internal:9324/000000000000/q",
		"http://[::1]:9324":                              "http://host.docker.internal:9324",
		"http://172.17.0.1:9324/000000000000/q":          "http://172.17.0.1:9324/000000000000/q",
		"https://sqs.us-east-1.amazonaws.com/123/events": "https://sqs.us-east-1.amazonaws.com/123/events",
	} {
		if got, err := samlocal.ContainerURL(in); err != nil || got != want {
			t.Errorf("ContainerURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := samlocal.ContainerURL("not a url"); err == nil {
		t.Error("a relative URL was accepted")
	}
}

// The package doc shows exactly the commands `make sam-local` prints, and the target runs the
// command that prints them.
func TestDocShowsTheCommandsTheTargetPrints(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "samlocal.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(f.Doc.Text(), "It prints Commands:\n\n")
	if !ok {
		t.Fatal(`the package doc has no "It prints Commands:" block`)
	}
	block, _, _ = strings.Cut(block, "\n\n")
	var got []string
	for _, l := range strings.Split(block, "\n") {
		got = append(got, strings.TrimPrefix(l, "\t"))
	}
	if want := samlocal.Commands(); !slices.Equal(got, want) {
		t.Errorf("package doc commands:\n%s\nmake sam-local prints:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^sam-local:\n\t.*run \./infra/local sam-local$`).Match(mk) {
		t.Error("the Makefile's sam-local target does not run ./infra/local sam-local")
	}
}
