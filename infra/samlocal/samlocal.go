// Package samlocal prepares runs of the template's functions under the SAM CLI (`sam local
// invoke`, `sam local start-api`, each function in its own container) against the local stack on
// this machine, which the containers reach as ContainerHost. `make sam-local` writes, under Dir:
//
//   - env.json, the --env-vars file: for every function of shared/app (by logical id), a value for
//     every environment variable template.yaml declares for it (sam local lets the file set only
//     declared ones), pointing it at DynamoDB Local and the SQS emulator and giving it the local
//     seal key instead of KMS. A declared variable with no local value is an error, so the file
//     cannot drift from the template or from the list of functions.
//   - events/<folder>/<file>, a copy of every sample event with its placeholders filled: the admin
//     token, what the samples refer to (made now), and {{id}}, the id of a resource made now with
//     the function's own create sample, so that every sample answers its documented status on
//     its own when run in name order. The committed samples keep their placeholders: the copies
//     hold a live token and belong to one running stack.
//   - invoke-all.sh, which runs every sample through `sam local invoke`.
//
// It prints Commands:
//
//	sam build
//	sam local start-api --env-vars .local/sam/env.json --add-host host.docker.internal:host-gateway
//	curl -s -H "Authorization: Bearer $(cat .local/admin.token)" -H "Ngrok-Version: 2" http://127.0.0.1:3000/api_keys
//	sam local invoke ApiKeysFunction --env-vars .local/sam/env.json --add-host host.docker.internal:host-gateway -e .local/sam/events/api_keys/2-list.json
//	bash .local/sam/invoke-all.sh
//
// Prerequisites: Docker and the SAM CLI (a 2024 or later release, for --add-host). The
// functions are arm64 as in AWS: Docker Desktop runs them anywhere; Docker Engine on x86-64
// Linux needs QEMU's binfmt emulation (Debian: qemu-user-static). Start the stack where
// containers can reach it (`STACK_LISTEN=0.0.0.0 make run`, or the Docker bridge's address on a
// network you do not trust), then run `make sam-local` in another terminal and the commands it
// prints. SAM runs neither the Pipes nor the SQS triggers: committed events move on in the
// `make run` left running beside, which serves the same table and queues.
package samlocal

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"gopkg.in/yaml.v3"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/serve"
	"tunnelapi/shared/testing/samples"
	"tunnelapi/shared/workers/frpplugin"
	"tunnelapi/shared/workers/operator"
)

const (
	// ContainerHost is the name SAM's containers reach this machine by (Docker Desktop defines
	// it; on Linux the commands map it with --add-host).
	ContainerHost = "host.docker.internal"
	// Dir is where `make sam-local` writes, relative to the repository root.
	Dir = ".local/sam"
	// samFlags are the flags every sam local command here takes.
	samFlags = "--env-vars " + Dir + "/env.json --add-host " + ContainerHost + ":host-gateway"
)

// Commands are the commands `make sam-local` prints, exactly as the package doc shows them.
func Commands() []string {
	return []string{
		"sam build",
		"sam local start-api " + samFlags,
		`curl -s -H "Authorization: Bearer $(cat .local/admin.token)" -H "Ngrok-Version: 2" http://127.0.0.1:3000/api_keys`,
		"sam local invoke ApiKeysFunction " + samFlags + " -e " + Dir + "/events/api_keys/2-list.json",
		"bash " + Dir + "/invoke-all.sh",
	}
}

// Stack is the running local stack as this machine reaches it.
type Stack struct {
	DynamoDBEndpoint string // DynamoDB Local, e.g. http://127.0.0.1:8000
	SQSEndpoint      string // the SQS emulator
	Table            string
	// Queues maps each queue-URL variable (EVENTS_QUEUE_URL, EVENTS_DLQ_URL, …) to its queue.
	Queues map[string]string
	// SealKey is the local master key (the content of the seal key file).
	SealKey []byte
	// Settings are the local server's own values, as set, of the variables the functions get
	// as they are (LocalSettings).
	Settings map[string]string
}

// passedOn are the variables whose local values the functions get as they are (empty: the
// default): the domain and address configuration, the renewal window, the rate limit, and the
// certificate worker's ACME directory and challtestsrv (URLs, rewritten for the containers).
var passedOn = []string{"RATE_LIMIT", "BASE_DOMAIN", "DNS_ZONE", "NAME_SERVERS", "REGIONS", "ADDR_POOLS",
	"CERT_RENEW_BEFORE", "ACME_DIRECTORY", "CHALLTESTSRV_URL"}

// LocalSettings are the values, as the local server has them set in lookup, of the variables
// Stack.Values passes on.
func LocalSettings(lookup config.Lookup) (map[string]string, error) {
	out := map[string]string{}
	for _, name := range passedOn {
		v, err := config.Value(lookup, config.ByLocal, name)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

// Values returns the value, as a container sees it, of every environment variable the template
// may declare: loopback URLs are rewritten to ContainerHost. A variable added to the template (a
// local service's URL, such as an ACME directory) needs its value here, its URL through
// ContainerURL; what a function would read from a file on this machine goes in as content, as
// SEAL_LOCAL_KEY does, since the container sees only the function's build.
func (s Stack) Values() (map[string]string, error) {
	return s.values(ContainerURL)
}

// LocalValues are Values as a process on this machine sees them: URLs stay as they are (for the
// functions run here under the Lambda Runtime Interface Emulator, infra/coldstart).
func (s Stack) LocalValues() (map[string]string, error) {
	return s.values(func(u string) (string, error) { return u, nil })
}

// values are Values with each URL through reach.
func (s Stack) values(reach func(string) (string, error)) (_ map[string]string, err error) {
	defer derrors.Wrap(&err, "samlocal.Stack.Values")
	if len(s.SealKey) != 32 {
		return nil, fmt.Errorf("the local seal key has %d bytes, want 32", len(s.SealKey))
	}
	v := map[string]string{
		"TABLE_NAME":      s.Table,
		"LOG_LEVEL":       "INFO",
		"SEAL_KMS_KEY_ID": "", // the local key below instead of KMS
		"SEAL_LOCAL_KEY":  hex.EncodeToString(s.SealKey),
	}
	// The domain and address configuration and the renewal window are the local server's own
	// (empty: the defaults).
	for _, name := range passedOn {
		v[name] = s.Settings[name]
	}
	// Off unless asked for, as under make run.
	v["RATE_LIMIT"] = cmp.Or(v["RATE_LIMIT"], "off")
	// The certificate worker: challenge records in the local challtestsrv rather than Route 53,
	// orders from the local pebble.
	v["HOSTED_ZONE_ID"], v["DELEGATION_SET_ID"] = "", ""
	// No AWS account of its own: no role is refused, as under make run, and no stack: the usage
	// worker reads every log group.
	v["DEPLOYMENT_ACCOUNT_ID"], v["STACK_NAME"] = "", ""
	// The operator admits the principals of the account SAM's pseudo-parameters and the sample
	// events name.
	v["OPERATOR_PRINCIPALS"] = "arn:aws:iam::123456789012:root"
	// Tunnel sessions live as long as the template's default lease.
	v["TUNNEL_LEASE"] = ""
	urls := map[string]string{"DYNAMODB_ENDPOINT": s.DynamoDBEndpoint, "SQS_ENDPOINT": s.SQSEndpoint}
	for _, name := range []string{"ACME_DIRECTORY", "CHALLTESTSRV_URL"} {
		if u := s.Settings[name]; u != "" {
			urls[name] = u
		} else {
			v[name] = ""
		}
	}
	for name, u := range s.Queues {
		urls[name] = u
	}
	for name, u := range urls {
		c, err := reach(u)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		v[name] = c
	}
	return v, nil
}

// ContainerURL is raw as a container reaches it: a loopback host becomes ContainerHost; any
// other host is already reachable as it is.
func ContainerURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("not an absolute URL: %q", raw)
	}
	switch u.Hostname() {
	case "127.0.0.1", "localhost", "::1":
		host := ContainerHost
		if p := u.Port(); p != "" {
			host = net.JoinHostPort(host, p)
		}
		u.Host = host
	}
	return u.String(), nil
}

// templateEnv is the part of template.yaml that says which environment variables each function
// has.
type templateEnv struct {
	Globals struct {
		Function struct {
			Environment struct {
				Variables map[string]any `yaml:"Variables"`
			} `yaml:"Environment"`
		} `yaml:"Function"`
	} `yaml:"Globals"`
	Resources map[string]struct {
		Type       string `yaml:"Type"`
		Properties struct {
			Environment struct {
				Variables map[string]any `yaml:"Variables"`
			} `yaml:"Environment"`
		} `yaml:"Properties"`
	} `yaml:"Resources"`
}

// EnvVars is the content of the --env-vars file: for each function (logical id), the value from
// values of every variable template declares for it (Globals and its own). A function missing
// from the template, or a declared variable without a value, is an error.
func EnvVars(template []byte, functions []string, values map[string]string) (_ map[string]map[string]string, err error) {
	defer derrors.Wrap(&err, "samlocal.EnvVars")
	var tpl templateEnv
	if err := yaml.Unmarshal(template, &tpl); err != nil {
		return nil, fmt.Errorf("template.yaml: %w", err)
	}
	out := map[string]map[string]string{}
	var missing []string
	for _, fn := range functions {
		res, ok := tpl.Resources[fn]
		if !ok || res.Type != "AWS::Serverless::Function" {
			return nil, fmt.Errorf("template.yaml has no function %s", fn)
		}
		env := map[string]string{}
		for _, vars := range []map[string]any{tpl.Globals.Function.Environment.Variables, res.Properties.Environment.Variables} {
			for name := range vars {
				v, ok := values[name]
				if !ok {
					missing = append(missing, fn+"."+name)
					continue
				}
				env[name] = v
			}
		}
		out[fn] = env
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("template.yaml declares variables with no local value (add them to Stack.Values): %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// LoadSealKey returns the local master key at path, creating the file as the local server would.
func LoadSealKey(path string) (_ []byte, err error) {
	defer derrors.Wrap(&err, "samlocal.LoadSealKey(%s)", path)
	if _, err := seal.LoadKeyFile(path); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// Options say what Write prepares and where.
type Options struct {
	Root  string // the repository root (template.yaml, events/)
	Out   string // where to write (Dir under Root for make sam-local)
	Stack Stack
	// Token is the bearer token the samples carry (the local admin's).
	Token string
	// Deps serve the handlers that make what the samples refer to, on the same stack.
	Deps *serve.Deps
}

// Write writes env.json, the filled sample events and invoke-all.sh under o.Out.
func Write(ctx context.Context, o Options) (err error) {
	defer derrors.Wrap(&err, "samlocal.Write")
	tpl, err := os.ReadFile(filepath.Join(o.Root, "template.yaml"))
	if err != nil {
		return err
	}
	values, err := o.Stack.Values()
	if err != nil {
		return err
	}
	var names []string
	for _, f := range app.Functions() {
		names = append(names, f.Name)
	}
	for _, w := range app.Workers {
		names = append(names, w.Name)
	}
	names = append(names, app.Operator.Name) // its routes are IAM-authorized: no samples
	env, err := EnvVars(tpl, names, values)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.Out, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return err
	}
	// 0600: it holds the local master key.
	if err := os.WriteFile(filepath.Join(o.Out, "env.json"), append(b, '\n'), 0o600); err != nil {
		return err
	}
	script := []string{
		"#!/usr/bin/env bash",
		"# Written by `make sam-local`: every sample event through `sam local invoke`, in order.",
		"set -euo pipefail",
		`cd "$(dirname "$0")/../.."`,
	}
	for _, f := range app.Functions() {
		files, err := writeHTTPSamples(ctx, o, f)
		if err != nil {
			return fmt.Errorf("%s: %w", f.Dir, err)
		}
		script = append(script, invokeLines(f.Name, files)...)
	}
	for _, w := range app.Workers {
		files, err := copySamples(o, w.Dir, nil)
		if err != nil {
			return fmt.Errorf("%s: %w", w.Dir, err)
		}
		script = append(script, invokeLines(w.Name, files)...)
	}
	return os.WriteFile(filepath.Join(o.Out, "invoke-all.sh"), []byte(strings.Join(script, "\n")+"\n"), 0o700)
}

func invokeLines(function string, files []string) []string {
	var out []string
	for _, f := range files {
		out = append(out, "sam local invoke "+function+" "+samFlags+" -e "+Dir+"/events/"+f)
	}
	return out
}

// writeHTTPSamples writes f's samples filled for o's account. The resource behind {{id}} is
// made now with f's create sample, on a setup of its own, so that the written create sample
// (on another setup) does not collide with it where a family keeps something unique (an IP
// policy's CIDRs).
func writeHTTPSamples(ctx context.Context, o Options, f app.Function) ([]string, error) {
	files, err := app.SampleFiles(o.Root, f.Dir)
	if err != nil {
		return nil, err
	}
	setup := func() (map[string]string, error) {
		vars, err := samples.Setup(ctx, o.Root, f.Dir, samples.Makers{Create: creator(o.Deps, o.Token), Report: func(ctx context.Context) (map[string]string, error) {
			return reportSession(ctx, o)
		}})
		if err != nil {
			return nil, err
		}
		vars[app.TokenPlaceholder] = o.Token
		return vars, nil
	}
	vars, err := setup()
	if err != nil {
		return nil, err
	}
	if vars[app.IDPlaceholder] == "" { // else reported by a tunnel server (its set-up says so)
		own, err := setup()
		if err != nil {
			return nil, err
		}
		if vars[app.IDPlaceholder], err = createWithSample(ctx, o.Deps.Handler(f.Families...), files, own); err != nil {
			return nil, err
		}
	}
	// Samples of a sub-resource (an HTTPS edge's routes) need one made now, under a resource of
	// its own: the written sub-resource create sample (under {{id}}) must not collide with it.
	if mentions(files, app.ChildIDPlaceholder) {
		parentVars, err := setup()
		if err != nil {
			return nil, err
		}
		parent, err := createWithSample(ctx, o.Deps.Handler(f.Families...), files, parentVars)
		if err != nil {
			return nil, err
		}
		parentVars[app.IDPlaceholder] = parent
		child, err := createWithSample(ctx, o.Deps.Handler(f.Families...), files, parentVars)
		if err != nil {
			return nil, err
		}
		vars[app.ParentIDPlaceholder], vars[app.ChildIDPlaceholder] = parent, child
	}
	return copySamples(o, f.Dir, vars)
}

// mentions reports whether any of files holds placeholder.
func mentions(files []string, placeholder string) bool {
	for _, file := range files {
		if raw, err := os.ReadFile(file); err == nil && strings.Contains(string(raw), placeholder) {
			return true
		}
	}
	return false
}

// createWithSample sends the first POST sample that needs no id through handler and returns the
// id it created. With vars holding IDPlaceholder, it is the first POST under that resource
// instead (a sub-resource's create).
func createWithSample(ctx context.Context, handler func(context.Context, lambdaevents.APIGatewayV2HTTPRequest) (lambdaevents.APIGatewayV2HTTPResponse, error), files []string, vars map[string]string) (string, error) {
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			return "", err
		}
		_, child := vars[app.IDPlaceholder]
		if child != strings.Contains(string(raw), app.IDPlaceholder) || strings.Contains(string(raw), app.ChildIDPlaceholder) {
			continue
		}
		text := app.FillSample(string(raw), vars)
		var ev lambdaevents.APIGatewayV2HTTPRequest
		if err := json.Unmarshal([]byte(text), &ev); err != nil {
			return "", fmt.Errorf("%s: %w", file, err)
		}
		if ev.RequestContext.HTTP.Method != http.MethodPost {
			continue
		}
		res, err := handler(ctx, ev)
		if err != nil {
			return "", fmt.Errorf("%s: %w", file, err)
		}
		var created struct{ ID string }
		json.Unmarshal([]byte(res.Body), &created)
		if res.StatusCode != http.StatusCreated || created.ID == "" {
			return "", fmt.Errorf("%s: status %d, want 201 with an id: %s", file, res.StatusCode, res.Body)
		}
		return created.ID, nil
	}
	return "", errors.New("no create sample (a POST needing no id, or for a sub-resource one under {{id}}) to make the resource the others refer to")
}

var placeholder = regexp.MustCompile(`\{\{[a-z_]+\}\}`)

// copySamples writes the samples of folder dir under o.Out/events/dir with vars filled in and
// returns their names relative to events/; a placeholder left unfilled is an error.
func copySamples(o Options, dir string, vars map[string]string) ([]string, error) {
	files, err := app.SampleFiles(o.Root, dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(o.Out, "events", dir), 0o700); err != nil {
		return nil, err
	}
	var out []string
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		text := app.FillSample(string(raw), vars)
		if p := placeholder.FindString(text); p != "" {
			return nil, fmt.Errorf("%s: nothing fills %s", file, p)
		}
		name := dir + "/" + filepath.Base(file)
		if err := os.WriteFile(filepath.Join(o.Out, "events", name), []byte(text), 0o600); err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, nil
}

// creator makes the samples' setup through every family's handlers, as the token's holder.
func creator(d *serve.Deps, token string) samples.Creator {
	mux := d.Mux(app.Families...)
	return func(ctx context.Context, path string, body any) (map[string]any, error) {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Ngrok-Version", "2")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		var out map[string]any
		if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
			return nil, fmt.Errorf("POST %s: status %d: %s", path, rec.Code, rec.Body)
		}
		return out, nil
	}
}

// reportSession has the tunnel servers' plugin report an agent of o.Token's account as frps
// would: a tunnel-server key minted, a credential and a reserved domain made through the API, a
// login and an http proxy on the domain. It returns the session's fields as samples.Reporter
// does.
func reportSession(ctx context.Context, o Options) (_ map[string]string, err error) {
	defer derrors.Wrap(&err, "samlocal.reportSession")
	out := map[string]string{}
	create := creator(o.Deps, o.Token)
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	domain := "sam-local-" + hex.EncodeToString(suffix) + ".example.com"
	if _, err := create(ctx, "/reserved_domains", map[string]any{"domain": domain}); err != nil {
		return out, err
	}
	cred, err := create(ctx, "/credentials", map[string]any{})
	if err != nil {
		return out, err
	}
	settings := o.Deps.Kit.Settings.Domains
	if settings == nil || len(settings.Regions) == 0 {
		return out, errors.New("the deployment's domain settings are not parsed")
	}
	key, err := operator.MintTunnelServer(ctx, o.Deps.Kit.DB, "sam-local", settings.Regions[0])
	if err != nil {
		return out, err
	}
	p := &frpplugin.Plugin{DB: o.Deps.Kit.DB, Domains: *settings, Lease: time.Hour}
	send := func(op string, content any) (map[string]any, error) {
		body, _ := json.Marshal(map[string]any{"version": "0.1.0", "op": op, "content": content})
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/frp/plugin?op="+op+"&version=0.1.0", bytes.NewReader(body))
		req.SetBasicAuth(key.Name+"."+key.Region, key.Secret)
		rec := httptest.NewRecorder()
		p.ServeHTTP(rec, req)
		var res struct {
			Reject  bool           `json:"reject"`
			Reason  string         `json:"reject_reason"`
			Content map[string]any `json:"content"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &res); rec.Code != http.StatusOK || err != nil || res.Reject {
			return nil, fmt.Errorf("%s: %d %s", op, rec.Code, rec.Body)
		}
		return res.Content, nil
	}
	login, err := send(frpplugin.OpLogin, map[string]any{"version": "0.70.1", "os": "linux", "arch": "amd64",
		"metas": map[string]any{"authtoken": cred["token"]}, "client_address": "127.0.0.1:40000"})
	if err != nil {
		return out, err
	}
	user := map[string]any{"user": "", "metas": login["metas"], "run_id": login["run_id"]}
	if _, err := send(frpplugin.OpNewProxy, map[string]any{"user": user, "proxy_name": "web", "proxy_type": "http",
		"custom_domains": []string{domain}}); err != nil {
		return out, err
	}
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/tunnels", nil)
	req.Header.Set("Authorization", "Bearer "+o.Token)
	req.Header.Set("Ngrok-Version", "2")
	rec := httptest.NewRecorder()
	o.Deps.Mux(app.Families...).ServeHTTP(rec, req)
	var list struct {
		Tunnels []struct {
			ID        string `json:"id"`
			PublicURL string `json:"public_url"`
		} `json:"tunnels"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || len(list.Tunnels) == 0 {
		return out, fmt.Errorf("no tunnel listed after the proxy: %d %s", rec.Code, rec.Body)
	}
	out["session_id"], _ = login["run_id"].(string)
	out["tunnel_id"], out["public_url"] = list.Tunnels[0].ID, list.Tunnels[0].PublicURL
	return out, nil
}
