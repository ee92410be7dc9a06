package httpsedges

import (
	"context"

	"tunnelapi/shared/families/edges"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/rules/httpmodules"
)

// checked is a module request form whose Check returns its stored form.
type checked[S any] interface {
	Check(field string) (S, error)
}

// rendered is a stored module whose JSON returns its response form.
type rendered[J any] interface {
	JSON() *J
}

// kind is the module kind name over a request form M checked and a stored form S rendered by
// their own methods (package httpmodules).
func kind[M checked[S], S rendered[J], J any](name string) *edges.Kind[M, S, J] {
	return &edges.Kind[M, S, J]{
		Name: name,
		Check: func(ctx context.Context, field string, in *M) (*S, error) {
			return stored((*in).Check(field))
		},
		Render: func(r *api.Request, s *S) *J { return (*s).JSON() },
	}
}

// headersKind is the request_headers (request true) or response_headers module.
func headersKind(name string, request bool) *edges.Kind[httpmodules.HeadersIn, httpmodules.Headers, httpmodules.HeadersJSON] {
	return &edges.Kind[httpmodules.HeadersIn, httpmodules.Headers, httpmodules.HeadersJSON]{
		Name: name,
		Check: func(ctx context.Context, field string, in *httpmodules.HeadersIn) (*httpmodules.Headers, error) {
			return stored(in.Check(field, request))
		},
		Render: func(r *api.Request, s *httpmodules.Headers) *httpmodules.HeadersJSON { return s.JSON() },
	}
}

// stored returns a checked module's stored form as the machinery takes it.
func stored[S any](s S, err error) (*S, error) {
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// The route module kinds of this package; backend, ip_restriction and traffic_policy are the
// edges package's.
var (
	CircuitBreakerModule        = kind[httpmodules.CircuitBreakerIn, httpmodules.CircuitBreaker]("circuit_breaker")
	CompressionModule           = kind[httpmodules.ToggleIn, httpmodules.Toggle]("compression")
	RequestHeadersModule        = headersKind("request_headers", true)
	ResponseHeadersModule       = headersKind("response_headers", false)
	WebhookVerificationModule   = kind[httpmodules.WebhookVerificationIn, httpmodules.WebhookVerification]("webhook_verification")
	OAuthModule                 = kind[httpmodules.OAuthIn, httpmodules.OAuth]("oauth")
	OIDCModule                  = kind[httpmodules.OIDCIn, httpmodules.OIDC]("oidc")
	WebsocketTCPConverterModule = kind[httpmodules.ToggleIn, httpmodules.Toggle]("websocket_tcp_converter")
	UserAgentFilterModule       = kind[httpmodules.UserAgentFilterIn, httpmodules.UserAgentFilter]("user_agent_filter")
	// SAMLModule renders the service provider's members where the route is served (SAML.SP,
	// set when the route is read).
	SAMLModule = &edges.Kind[httpmodules.SAMLIn, httpmodules.SAML, httpmodules.SAMLJSON]{
		Name: "saml",
		Check: func(ctx context.Context, field string, in *httpmodules.SAMLIn) (*httpmodules.SAML, error) {
			return stored(in.Check(field))
		},
		Render: func(r *api.Request, s *httpmodules.SAML) *httpmodules.SAMLJSON { return s.JSON(s.SP) },
	}
)
