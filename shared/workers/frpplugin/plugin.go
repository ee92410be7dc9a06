package frpplugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"tunnelapi/shared/families/tunnels"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
)

// Path is the plugin's path on the API's base URL; Route its one route.
const (
	Path  = "/frp/plugin"
	Route = "POST " + Path
)

// The operations frps asks about.
const (
	OpLogin      = "Login"
	OpNewProxy   = "NewProxy"
	OpCloseProxy = "CloseProxy"
	OpPing       = "Ping"
)

// Plugin answers frps's plugin requests from the table.
type Plugin struct {
	DB *store.DB
	// Domains are the deployment's base domain (subdomains are names under it), regions and
	// address pools.
	Domains config.Domains
	// Lease is how long a session lives without a heartbeat (TUNNEL_LEASE).
	Lease time.Duration
	Log   *slog.Logger
	// Budget is how long a request may run: the function's timeout.
	Budget time.Duration
}

// request is the body frps sends.
type request struct {
	Version string          `json:"version"`
	Op      string          `json:"op"`
	Content json.RawMessage `json:"content"`
}

// Response is the plugin's answer, as frps reads it: a refusal with its reason, an admission
// unchanged, or an admission with the content rewritten (the whole content: frps takes a
// missing member as its zero value).
type Response struct {
	Reject       bool   `json:"reject"`
	RejectReason string `json:"reject_reason,omitempty"`
	Unchange     bool   `json:"unchange"`
	Content      any    `json:"content,omitempty"`
}

// admit is the admission that changes nothing.
var admit = Response{Unchange: true}

// refuse is the refusal for reason.
func refuse(format string, args ...any) Response {
	return Response{Reject: true, RejectReason: fmt.Sprintf(format, args...)}
}

// server is the tunnel server a request comes from, as its key names it.
type server struct {
	name, region, secretHash string
}

// errUnauthorized answers a request whose Basic credentials are missing, malformed, unknown or
// revoked: frps counts any status but 200 as a refusal.
var errUnauthorized = &api.Error{Status: http.StatusUnauthorized, Code: api.CodeUnknownKey,
	Msg: "the tunnel server's key is missing, malformed, unknown or revoked: set the plugin's addr to http(s)://<name>.<region>:<secret>@<host> with a key the operator minted"}

// Register adds the plugin's route to mux.
func (p *Plugin) Register(mux api.Mux) { mux.Handle(Route, p) }

// ServeHTTP answers one plugin request.
func (p *Plugin) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	start := time.Now()
	r := &api.Request{HTTP: hr, OpID: ids.New(ids.Operation)}
	w.Header().Set("Ngrok-Operation-Id", r.OpID)
	var op string
	res, err := func() (Response, error) {
		body, rerr := io.ReadAll(io.LimitReader(hr.Body, api.MaxBodyBytes+1))
		if rerr != nil || len(body) > api.MaxBodyBytes {
			return Response{}, api.BadRequest(api.CodeBodyTooLarge, "body", "the request body could not be read or exceeds %d bytes", api.MaxBodyBytes)
		}
		var in request
		if err := json.Unmarshal(body, &in); err != nil || len(in.Content) == 0 {
			return Response{}, api.BadRequest(api.CodeUnparseableBody, "body", "the body is not frp's plugin request {\"version\",\"op\",\"content\"}")
		}
		op = in.Op
		if q := hr.URL.Query().Get("op"); q != "" && q != op {
			return Response{}, api.Invalid("op", "the query's op %s differs from the body's %s", api.Describe(q), api.Describe(op))
		}
		user, secret, ok := hr.BasicAuth()
		name, region, valid := tunnels.ParseServerUser(user)
		if !ok || !valid || secret == "" {
			return Response{}, errUnauthorized
		}
		s := server{name: name, region: region, secretHash: store.TokenHash(secret)}
		ctx, cancel := context.WithTimeout(hr.Context(), p.budget())
		defer cancel()
		switch op {
		case OpLogin:
			return p.login(ctx, r, s, in.Content)
		case OpNewProxy:
			return p.newProxy(ctx, r, s, in.Content)
		case OpCloseProxy:
			return p.closeProxy(ctx, s, in.Content)
		case OpPing:
			return p.ping(ctx, s, in.Content)
		}
		return Response{}, api.Invalid("op", "op %s is none of Login, NewProxy, CloseProxy and Ping: set the plugin's ops to those four", api.Describe(op))
	}()
	status := http.StatusOK
	if err != nil {
		status = api.WriteError(w, r.OpID, err)
		if _, ok := api.AsError(err); !ok {
			p.logger().Error("plugin request failed", "op", r.OpID, "plugin_op", op, "err", err.Error())
		}
	} else {
		b, _ := json.Marshal(res)
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}
	attrs := []slog.Attr{slog.String("op", r.OpID), slog.String("plugin_op", op), slog.Int("status", status),
		slog.Bool("reject", res.Reject), slog.Int64("ms", time.Since(start).Milliseconds())}
	if res.Reject {
		attrs = append(attrs, slog.String("reason", res.RejectReason))
	}
	p.logger().LogAttrs(hr.Context(), slog.LevelInfo, "plugin request", attrs...)
}

// verify checks the token item read for s: a tunnel-server key naming the same server.
func (s server) verify(raw store.Item) (tunnels.ServerTokenItem, error) {
	var t tunnels.ServerTokenItem
	if raw == nil {
		return t, errUnauthorized
	}
	if err := store.Unmarshal(raw, &t); err != nil {
		return t, err
	}
	if t.Kind != tunnels.KindTunnelServer || t.Name != s.name || t.Region != s.region {
		return t, errUnauthorized
	}
	return t, nil
}

// key is the token item of s's secret.
func (s server) key() store.Key { return store.TokenKey(s.secretHash) }

// unreachable reports whether err is the store's want of an answer (unreachable, throttling,
// timed out) rather than an answer.
func unreachable(err error) bool {
	return errors.Is(err, derrors.ErrUnavailable) || errors.Is(err, derrors.ErrOutcomeUnknown) ||
		errors.Is(err, context.DeadlineExceeded)
}

// errStore is the refusal of a login or a proxy when the store cannot be reached.
func errStore(what string) Response {
	return refuse("%s cannot be checked now: the API cannot reach its store; retry shortly", what)
}

func (p *Plugin) budget() time.Duration {
	if p.Budget > 0 {
		return p.Budget
	}
	return 8 * time.Second
}

func (p *Plugin) lease() time.Duration {
	if p.Lease > 0 {
		return p.Lease
	}
	d, _ := time.ParseDuration(config.Default("TUNNEL_LEASE"))
	return d
}

func (p *Plugin) logger() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.Default()
}

// Lambda is the plugin's route as a Lambda handler behind API Gateway; a path that is not
// canonical is a 404 (api.Canonical), never a redirect.
func (p *Plugin) Lambda() func(context.Context, lambdaevents.APIGatewayV2HTTPRequest) (lambdaevents.APIGatewayV2HTTPResponse, error) {
	mux := http.NewServeMux()
	p.Register(mux)
	mux.Handle("/", (&api.Server{}).NotFound())
	return httpadapter.NewV2(api.Canonical(mux)).ProxyWithContext
}

// Main is the plugin function's main.
func Main() {
	p := config.Start(config.LoadTunnelPlugin, func(ctx context.Context, c config.TunnelPlugin, log *slog.Logger) (*Plugin, error) {
		db, err := store.Open(ctx, c.StoreOptions())
		if err != nil {
			return nil, err
		}
		return &Plugin{DB: db, Domains: c.Domains, Lease: c.Lease, Log: log}, nil
	})
	lambda.Start(p.Lambda())
}

// sortedKeys are m's keys in order, so refusals name the same restriction every time.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// unmarshal decodes a request's content.
func unmarshal(raw []byte, v any) error { return json.Unmarshal(raw, v) }
