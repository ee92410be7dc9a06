// Package serve is the one way a family's handlers are served: the same mux runs behind
// API Gateway's HTTP API (through aws-lambda-go-api-proxy) and in the local all-in-one server.
package serve

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"

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
func (d *Deps) Mux(families ...*resource.Descriptor) http.Handler {
	mux := http.NewServeMux()
	for _, f := range families {
		f.Register(d.Kit, mux, d.Server)
	}
	mux.Handle("/", d.Server.NotFound())
	return d.Server.Front(mux)
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
