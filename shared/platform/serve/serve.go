// Package serve is the one way a family's handlers are served: the same mux runs behind
// API Gateway's HTTP API (through aws-lambda-go-api-proxy) and in the local all-in-one server.
package serve

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"strings"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/iprestrict"
	"tunnelapi/shared/platform/ratelimit"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"
)

// Deps are the dependencies every family's handlers share.
type Deps struct {
	Kit    *resource.Kit
	Server *api.Server
	// Limiter is the per-account rate limit RATE_LIMIT configures; nil when it is off.
	Limiter *ratelimit.Limiter
}

// NewDeps builds the dependencies of an HTTP function configured by c (package config) with no
// network I/O; opts may name another table, endpoint or SDK hooks (tests), else c's are used.
// Handlers reach only the table: committed events leave through the table's stream, not from
// the request.
func NewDeps(ctx context.Context, c config.HTTP, opts store.Options) (*Deps, error) {
	log := config.Logger(c.LogLevel)
	policy := c.RateLimit
	cfg := c.AWSConfig()
	opts.Table = cmp.Or(opts.Table, c.Table)
	opts.Endpoint = cmp.Or(opts.Endpoint, c.DynamoDBEndpoint)
	if opts.Config == nil {
		opts.Config = &cfg
	}
	db, err := store.Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	a := &auth.Authenticator{DB: db}
	kit := &resource.Kit{DB: db, Seal: seal.New(cfg, c.Seal), Log: log, Settings: c.FamilySettings}
	// Every request checks the account's API IP restrictions against the item auth reads anyway.
	a.Restrictor = &iprestrict.Accounts{DB: db, Log: func() *slog.Logger { return kit.Log }}
	d := &Deps{Kit: kit, Server: &api.Server{Log: log, Source: api.RemoteAddrSource, Auth: a}}
	if policy.Enabled() {
		d.Limiter = &ratelimit.Limiter{DB: db, Policy: policy, Log: func() *slog.Logger { return kit.Log }}
		a.Limiter = d.Limiter
		d.Server.RateLimitPolicy = policy.Field()
	}
	return d, nil
}

// Mux builds the http.Handler serving the given families, with a 404 in the envelope for
// anything else, behind api.Server.Front (the same on Lambda and in the local server).
//
// The ServeMux gets one pattern per path, which picks the route by method (byPath): a function
// starts by registering its routes, and a ServeMux pattern costs at start (parsing, conflict
// checks, the caller's file and line) while the families' routes average more than two methods
// a path. It answers as a pattern per route would: the families' paths never overlap (no
// request path matches two of them), so the path decides as the pattern did; a HEAD is served
// by the path's GET, as a GET pattern serves it; and any other method is the catch-all's 404,
// as it was (no 405: "/" matches every method). Two families naming one path with other
// wildcard names would conflict here and stop the function at start.
func (d *Deps) Mux(families ...*resource.Descriptor) http.Handler {
	routes := &byPath{}
	for _, f := range families {
		f.Register(d.Kit, routes, d.Server)
	}
	notFound := d.Server.NotFound()
	mux := http.NewServeMux()
	for _, path := range routes.paths {
		methods := routes.methods[path]
		mux.Handle(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h, ok := methods[r.Method]
			if !ok && r.Method == http.MethodHead {
				h, ok = methods[http.MethodGet]
			}
			if !ok {
				h = notFound
			}
			h.ServeHTTP(w, r)
		}))
	}
	mux.Handle("/", notFound)
	return d.Server.Front(mux)
}

// byPath collects routes ("METHOD /path") by path, in the order their paths first come.
type byPath struct {
	paths   []string
	methods map[string]map[string]http.Handler
}

// Handle adds pattern's route; a pattern without a method panics, as every family route has one.
func (b *byPath) Handle(pattern string, h http.Handler) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		panic("serve: the route " + pattern + " has no method")
	}
	if b.methods == nil {
		b.methods = map[string]map[string]http.Handler{}
	}
	if b.methods[path] == nil {
		b.methods[path] = map[string]http.Handler{}
		b.paths = append(b.paths, path)
	}
	if _, dup := b.methods[path][method]; dup {
		panic("serve: the route " + pattern + " is registered twice")
	}
	b.methods[path][method] = h
}

// Handler is the Lambda handler for API Gateway HTTP API (payload v2) events serving families.
func (d *Deps) Handler(families ...*resource.Descriptor) func(context.Context, lambdaevents.APIGatewayV2HTTPRequest) (lambdaevents.APIGatewayV2HTTPResponse, error) {
	return httpadapter.NewV2(d.Mux(families...)).ProxyWithContext
}

// Loader is the configuration parser of a function serving families: the settings every HTTP
// function reads and the sections its families read (Descriptor.Reads).
func Loader(families ...*resource.Descriptor) func(config.Lookup) (config.HTTP, error) {
	var sections []config.Section
	for _, f := range families {
		sections = append(sections, f.Reads...)
	}
	return config.HTTPLoader(sections...)
}

// Main is a function's whole main: build the dependencies from the environment (config.Start)
// and serve families on Lambda. A malformed setting stops it, named in the log. Its families
// keep no secrets (MainWithKMS).
func Main(families ...*resource.Descriptor) { MainWithKMS(nil, families...) }

// MainWithKMS is Main for families that seal or open secrets, with KMS sealers made by kms
// (package kmsseal).
func MainWithKMS(kms seal.NewKMS, families ...*resource.Descriptor) {
	d := config.Start(Loader(families...), func(ctx context.Context, c config.HTTP, _ *slog.Logger) (*Deps, error) {
		c.Seal.NewKMS = kms
		return NewDeps(ctx, c, store.Options{})
	})
	lambda.Start(d.Handler(families...))
}
