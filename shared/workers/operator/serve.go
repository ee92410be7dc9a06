package operator

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
)

// Operator serves the operator's interface on the table.
type Operator struct {
	DB *store.DB
	// Collections are the service's families as an erasure reads them: it deletes the resources
	// of each one's collection and frees what they hold.
	Collections []Collection
	Log         *slog.Logger
	// Budget is how long a request may run: the template's Timeout of the function.
	Budget time.Duration
	// Principals are the IAM principals its Lambda handler admits (Lambda); none admits no one.
	Principals Principals
	// Regions are the regions a tunnel-server key may name (REGIONS; empty: its default).
	Regions []string
}

// Route is one operation of the operator's interface.
type Route struct {
	Method, Pattern string
	Status          int
	serve           func(*Operator, context.Context, *api.Request) (any, error)
}

// Routes are the operator's routes, each authorized in AWS by API Gateway's IAM authorization
// (template.yaml) and locally by a Verifier.
var Routes = []Route{
	{http.MethodPost, "/operator/tenants", http.StatusCreated, (*Operator).create},
	{http.MethodGet, "/operator/tenants", http.StatusOK, (*Operator).list},
	{http.MethodGet, "/operator/tenants/{id}", http.StatusOK, (*Operator).get},
	{http.MethodGet, "/operator/tenants/{id}/usage", http.StatusOK, (*Operator).usageOf},
	{http.MethodPost, "/operator/tenants/{id}/suspend", http.StatusOK, (*Operator).suspend},
	{http.MethodPost, "/operator/tenants/{id}/resume", http.StatusOK, (*Operator).resume},
	{http.MethodPost, "/operator/tenants/{id}/keys", http.StatusCreated, (*Operator).issueKey},
	{http.MethodDelete, "/operator/tenants/{id}", http.StatusNoContent, (*Operator).remove},
	{http.MethodPost, "/operator/tunnel_servers", http.StatusCreated, (*Operator).createTunnelServer},
	{http.MethodGet, "/operator/tunnel_servers", http.StatusOK, (*Operator).listTunnelServers},
	{http.MethodDelete, "/operator/tunnel_servers/{id}", http.StatusNoContent, (*Operator).deleteTunnelServer},
}

// Authorize decides whether an operator request (with its body) may run; nil admits it.
type Authorize func(r *http.Request, body []byte) error

// Register adds the operator's routes to mux, each admitted by authorize first.
func (o *Operator) Register(mux api.Mux, authorize Authorize) {
	for _, rt := range Routes {
		mux.Handle(rt.Method+" "+rt.Pattern, o.handler(rt, authorize))
	}
}

// handler runs one route: the body read (capped), the request authorized, then the operation,
// its result written as JSON or its error in the platform's envelope.
func (o *Operator) handler(rt Route, authorize Authorize) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, hr *http.Request) {
		start := time.Now()
		r := &api.Request{HTTP: hr, OpID: ids.New(ids.Operation)}
		w.Header().Set("Ngrok-Operation-Id", r.OpID)
		status, err := rt.Status, error(nil)
		var v any
		body, rerr := io.ReadAll(io.LimitReader(hr.Body, api.MaxBodyBytes+1))
		switch {
		case rerr != nil || len(body) > api.MaxBodyBytes:
			err = api.BadRequest(api.CodeBodyTooLarge, "body", "the request body could not be read or exceeds %d bytes", api.MaxBodyBytes)
		default:
			err = authorize(hr, body)
		}
		if err == nil {
			r.Body = body
			ctx, cancel := context.WithTimeout(hr.Context(), o.budget())
			v, err = rt.serve(o, ctx, r)
			cancel()
		}
		if a, ok := v.(accepted); ok {
			v, status = a.Tenant, http.StatusAccepted
			w.Header().Set("Retry-After", "1")
		}
		switch {
		case err != nil:
			status = api.WriteError(w, r.OpID, err)
			if _, ok := api.AsError(err); !ok {
				o.logger().Error("operator request failed", "op", r.OpID, "path", hr.URL.Path, "err", err.Error())
			}
		case v == nil:
			status = http.StatusNoContent
			w.WriteHeader(status)
		default:
			b, _ := api.MarshalUnescaped(v)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			w.Write(b)
		}
		o.logger().LogAttrs(hr.Context(), slog.LevelInfo, "operator request", slog.String("op", r.OpID),
			slog.String("method", hr.Method), slog.String("path", hr.URL.Path), slog.Int("status", status),
			slog.Int64("ms", time.Since(start).Milliseconds()))
	})
}

func (o *Operator) budget() time.Duration {
	if o.Budget > 0 {
		return o.Budget
	}
	return 25 * time.Second
}

func (o *Operator) logger() *slog.Logger {
	if o.Log != nil {
		return o.Log
	}
	return slog.Default()
}

// ByIAM admits the requests API Gateway authorized with IAM (its request context names the
// signer); any other is refused, should a route ever be deployed without the authorization.
func ByIAM(ev lambdaevents.APIGatewayV2HTTPRequest) bool {
	a := ev.RequestContext.Authorizer
	return a != nil && a.IAM != nil && a.IAM.AccessKey != "" && a.IAM.UserARN != ""
}

// Main is the operator function's main: its routes on Lambda (Lambda), erasing collections.
// Its main (generated by shared/app/gen) names each family's collection by its prefix and
// release function, not by its Descriptor, whose Binding would link every family's serving code
// (traffic policy validation among it) into the function.
func Main(collections ...Collection) {
	o := config.Start(config.LoadOperator, func(ctx context.Context, c config.Operator, log *slog.Logger) (*Operator, error) {
		db, err := store.Open(ctx, c.StoreOptions())
		if err != nil {
			return nil, err
		}
		if len(c.Principals) == 0 {
			return nil, errors.New("operator: OPERATOR_PRINCIPALS names no principal: no request could be admitted")
		}
		return &Operator{DB: db, Collections: collections, Log: log, Principals: c.Principals, Regions: c.Regions}, nil
	})
	lambda.Start(o.Lambda())
}

// Handler serves o's routes, each request authorized by authorize; a path that is not
// canonical (api.Canonical) or that no route matches is a 404 in the error envelope.
func (o *Operator) Handler(authorize Authorize) http.Handler {
	mux := http.NewServeMux()
	o.Register(mux, authorize)
	mux.Handle("/", (&api.Server{}).NotFound())
	return api.Canonical(mux)
}

// Lambda is o's routes as a Lambda handler behind API Gateway's IAM authorization: an event
// API Gateway did not authorize with IAM (ByIAM) is refused with 403, and so is one signed by a
// principal that is not one of o.Principals (checked on every request).
func (o *Operator) Lambda() func(context.Context, lambdaevents.APIGatewayV2HTTPRequest) (lambdaevents.APIGatewayV2HTTPResponse, error) {
	proxy := httpadapter.NewV2(o.Handler(func(*http.Request, []byte) error { return nil })).ProxyWithContext
	refuse := func(e *api.Error) lambdaevents.APIGatewayV2HTTPResponse {
		return lambdaevents.APIGatewayV2HTTPResponse{StatusCode: http.StatusForbidden,
			Headers: map[string]string{"Content-Type": "application/json"},
			Body:    `{"error_code":"` + e.Code + `","status_code":403,"msg":"` + e.Msg + `","details":{}}`}
	}
	return func(ctx context.Context, ev lambdaevents.APIGatewayV2HTTPRequest) (lambdaevents.APIGatewayV2HTTPResponse, error) {
		if !ByIAM(ev) {
			return refuse(ErrNotSigned), nil
		}
		if caller := ev.RequestContext.Authorizer.IAM.UserARN; !o.Principals.Admits(caller) {
			o.logger().Warn("operator request refused: not an operator principal", "caller", caller, "path", ev.RawPath)
			return refuse(ErrNotOperator), nil
		}
		return proxy(ctx, ev)
	}
}

// StatusOf is the status a route answers with when it succeeds (routeKey: "POST
// /operator/tenants"); 0 for no route of the operator's.
func StatusOf(routeKey string) int {
	for _, rt := range Routes {
		if rt.Method+" "+rt.Pattern == routeKey {
			return rt.Status
		}
	}
	return 0
}
