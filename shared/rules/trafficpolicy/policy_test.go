package trafficpolicy

import (
	"context"
	"strings"
	"testing"

	"tunnelapi/shared/platform/api"
)

// Documented examples of the platform's actions, in YAML and JSON.
var accepted = map[string]string{
	"restrict-ips yaml": `
on_http_request:
  - actions:
      - type: restrict-ips
        config:
          enforce: true
          allow:
            - 1.1.1.1/32
          deny:
            - e680:5791:be4c:5739:d959:7b94:6d54:d4b4/128
`,
	"restrict-ips tcp json": `{"on_tcp_connect":[{"actions":[{"type":"restrict-ips","config":{"enforce":true,"ip_policies":["ipp_1yjqdrIBwgciY2I9zH2EelgBbJF"]}}]}]}`,
	"restrict-ips unenforced with log": `
on_http_request:
  - actions:
      - type: restrict-ips
        config:
          enforce: false
          ip_policies:
            - ipp_1yjqdrIBwgciY2I9zH2EelgBbJF
      - type: log
        config:
          metadata:
            message: Restrict IPs action would be ${actions.ngrok.restrict_ips.action} for ${conn.client_ip}.
            matched_cidr: ${actions.ngrok.restrict_ips.matched_cidr}
`,
	"rate-limit": `
on_http_request:
  - name: Only allow 10 requests per minute
    actions:
      - type: rate-limit
        config:
          name: Only allow 10 requests per minute
          algorithm: sliding_window
          capacity: 10
          rate: 60s
          bucket_key:
            - conn.client_ip
            - req.headers['x-api-key']
            - getReqHeader('X-Api-Key')
`,
	"custom-response": `{
  "on_http_request": [
    {
      "expressions": ["req.url.path == '/maintenance'"],
      "actions": [
        {"type": "custom-response", "config": {"status_code": 503, "content": "<html><body>Down for maintenance</body></html>",
         "headers": {"content-type": "text/html"}}}
      ]
    }
  ]
}`,
	"add-headers request and response": `
on_http_request:
  - actions:
      - type: add-headers
        config:
          headers:
            x-client-ip: ${conn.client_ip}
            x-geo: ${conn.geo.country_code}
on_http_response:
  - expressions:
      - res.status_code >= 300 && hasResHeader('Content-Type')
    actions:
      - type: add-headers
        config:
          headers:
            x-served-by: ngrok
`,
	"url-rewrite": `
on_http_request:
  - expressions:
      - req.url.path.startsWith('/products')
    actions:
      - type: url-rewrite
        config:
          from: ${req.url.authority}/products/?([.*]+)?
          to: /products.php?query=$1
`,
	"deny": `
on_http_request:
  - name: Block bots and other countries
    expressions:
      - "req.user_agent.is_bot || !(conn.geo.country_code in ['US', 'CA'])"
      - "inCidrRange(conn.client_ip, '66.249.66.1/24') == false"
    actions:
      - type: deny
        config:
          status_code: 404
on_tcp_connect:
  - expressions:
      - "conn.client_ip == '192.0.2.0'"
    actions:
      - type: deny
`,
	"macros and extensions": `
on_http_request:
  - expressions:
      - "size(getQueryParam('q')) == 0 && hasReqCookie('session')"
      - "'proxy.anonymous.tor' in conn.client_ip.categories"
      - "json.decode(getReqHeader('X-Json')[0])[0] == 'first'"
      - "timestamp(time.now) > timestamp('2023-12-31T00:00:00Z')"
      - "req.url.query_params['foo'].exists(v, v.matches('^b'))"
      - "'hello %s'.format(['world']) == 'hello world' && 'a,b'.split(',').size() == 2"
      - "req.url.path.lower().sha256() != '' && hash.md5('x', 'hex') != ''"
    actions:
      - type: custom-response
        config:
          content: ${req.url.path}
`,
	"empty phases": `on_http_request: []`,
	"custom-response as documented": `
on_http_request:
  - expressions:
      - "req.url.path == '/health'"
    actions:
      - type: custom-response
        config:
          status_code: 200
          body: '{"ok": true, "path": "${req.url.path}"}'
          headers:
            content-type: application/json
on_http_response:
  - expressions: ["res.status_code >= 500"]
    actions:
      - type: custom-response
        config:
          status_code: 503
          body: Sorry
`,
	"openid-connect and its other name oidc": `
on_http_request:
  - actions:
      - type: openid-connect
        config:
          issuer_url: https://accounts.google.com
          client_id: "${secrets.get('vault', 'client_id')}"
          client_secret: "${secrets.get('vault', 'client_secret')}"
          scopes: [openid, profile, email]
          idle_session_duration: 1h
      - type: oidc
        config: {issuer_url: https://accounts.google.com}
`,
	"jwt-validation with keys and sources written as single objects": `
on_http_request:
  - actions:
      - type: jwt-validation
        config:
          issuer:
            allow_list:
              - value: https://example.auth0.com/
          audience:
            allow_list:
              - value: https://api.example.com
          http:
            tokens:
              - type: jwt
                method: header
                name: Authorization
                prefix: "Bearer "
          jws:
            allowed_algorithms: [RS256]
            keys:
              sources:
                additional_jkus:
                  - https://example.auth0.com/.well-known/jwks.json
`,
	"sse-find-replace in the fourth phase": `
on_event_stream_message:
  - expressions: ["res.status_code == 200"]
    actions:
      - type: sse-find-replace
        config:
          replacements:
            - field: data
              from: secret-[0-9]+
              to: "[redacted]"
`,
	"an action written directly in the phase list": `
on_http_request:
  - type: ai-gateway
    config:
      on_error: continue
      per_request_timeout: 30s
      providers: [{id: openai}]
`,
	"set-vars as a list and as a plain map, read back": `
on_http_request:
  - actions:
      - type: set-vars
        config:
          vars:
            - region: ${conn.geo.country_code}
            - tier: gold
      - type: set-vars
        config:
          vars:
            color: blue
  - expressions: ["vars.region == 'US' && vars.tier == 'gold'"]
    actions:
      - type: add-headers
        config:
          headers:
            x-region: ${vars.region}
`,
	"basic-auth credentials as strings and as objects": `
on_http_request:
  - actions:
      - type: basic-auth
        config:
          realm: private
          credentials:
            - alice:correct-horse
            - username: bob
              password: battery-staple
`,
	"http-request with a retry condition": `
on_http_request:
  - actions:
      - type: http-request
        config:
          url: https://auth.internal/check
          method: POST
          query_params:
            - key: user
              value: ${req.headers['x-user'][0]}
          timeout: 5s
          retry_condition: attempts < 3 && last_attempt.res.status_code >= 500
          on_error: halt
`,
	"webhook verification under both names, compression on requests": `
on_http_request:
  - actions:
      - type: verify-webhook
        config: {provider: github, secret: "${secrets.get('hooks', 'github')}"}
      - type: webhook-validation
        config: {provider: stripe, secret: whsec_x}
      - type: compress-response
        config: {algorithms: [gzip, br]}
`,
}

func TestAcceptedExamples(t *testing.T) {
	for name, doc := range accepted {
		if err := Validate(context.Background(), "traffic_policy", doc); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestRefusedWithPointedMessages(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []string // substrings of the message
	}{
		{"empty", "  ", []string{"empty"}},
		{"malformed json", `{"on_http_request": [}`, []string{"not valid JSON", "line 1"}},
		{"malformed yaml", "on_http_request:\n  - actions: [\n", []string{"not a valid YAML"}},
		{"not a mapping", `[1, 2]`, []string{"must be a mapping of phases"}},
		{"unknown phase", `{"on_http_requests": []}`, []string{`unknown phase "on_http_requests"`, "on_tcp_connect, on_http_request, on_http_response, on_event_stream_message"}},
		{"legacy phase", "inbound: []", []string{`unknown phase "inbound"`, "legacy"}},
		{"phase not a list", "on_http_request: {}", []string{"on_http_request: a phase must be a list"}},
		{"broken cel", "on_http_request:\n  - name: gate\n    expressions: [\"req.method == \"]\n    actions: [{type: deny}]",
			[]string{`on_http_request[0].expressions[0] (rule "gate")`, "does not compile"}},
		{"undeclared function", "on_http_request:\n  - expressions: [\"nope(req.method)\"]\n    actions: [{type: deny}]",
			[]string{"on_http_request[0].expressions[0]", "nope"}},
		{"response variable in request phase", "on_http_request:\n  - expressions: [\"res.status_code == 200\"]\n    actions: [{type: deny}]",
			[]string{"on_http_request[0].expressions[0]", "res"}},
		{"request variable in tcp phase", "on_tcp_connect:\n  - expressions: [\"req.method == 'GET'\"]\n    actions: [{type: deny}]",
			[]string{"on_tcp_connect[0].expressions[0]", "req"}},
		{"unknown variable member", "on_http_request:\n  - expressions: [\"req.methd == 'GET'\"]\n    actions: [{type: deny}]",
			[]string{"req.methd is not a documented variable", "req has content_encoding"}},
		{"not a condition", "on_http_request:\n  - expressions: [\"1 + 2\"]\n    actions: [{type: deny}]",
			[]string{"must be a condition"}},
		{"unknown action", "on_http_request:\n  - actions:\n      - type: teleport\n", []string{`on_http_request[0].actions[0].type`, `unknown action type "teleport"`}},
		{"action in wrong phase", "on_tcp_connect:\n  - actions:\n      - type: rate-limit\n", []string{"on_tcp_connect[0].actions[0].type", "cannot run in on_tcp_connect"}},
		{"no actions", "on_http_request:\n  - name: x\n", []string{"on_http_request[0].actions", "at least one action"}},
		{"unknown rule field", "on_http_request:\n  - action: []\n", []string{`on_http_request[0].action`, "unknown field"}},
		{"config not a mapping", "on_http_request:\n  - actions:\n      - type: deny\n        config: 404\n", []string{"actions[0].config", "must be a mapping"}},
		{"unknown config field", "on_http_request:\n  - actions:\n      - type: deny\n        config: {status: 404}\n", []string{"actions[0].config.status", `unknown field "status"`}},
		{"bad status type", "on_http_request:\n  - actions:\n      - type: deny\n        config: {status_code: '404'}\n", []string{"config.status_code", "whole number"}},
		{"rate-limit missing", "on_http_request:\n  - actions:\n      - type: rate-limit\n        config: {name: x, algorithm: sliding_window, capacity: 1, rate: 60s}\n",
			[]string{"config.bucket_key", "requires bucket_key"}},
		{"rate-limit rate", "on_http_request:\n  - actions:\n      - type: rate-limit\n        config: {name: x, algorithm: sliding_window, capacity: 1, rate: 5s, bucket_key: [conn.client_ip]}\n",
			[]string{"config.rate", "at least 60s"}},
		{"restrict-ips cidr", "on_http_request:\n  - actions:\n      - type: restrict-ips\n        config: {allow: [10.0.0.1/8]}\n",
			[]string{"config.allow[0]", "10.0.0.0/8"}},
		{"add-headers value", "on_http_request:\n  - actions:\n      - type: add-headers\n        config: {headers: {x: [1]}}\n", []string{"config.headers.x", "must be a string"}},
		{"broken interpolation", "on_http_request:\n  - actions:\n      - type: add-headers\n        config: {headers: {x: '${conn.client_ip'}}\n", []string{"config.headers.x", "no closing"}},
		{"bad interpolation", "on_http_request:\n  - actions:\n      - type: custom-response\n        config: {content: '${res.status_code}'}\n", []string{"config.content", "res"}},
		{"both names of one field", "on_http_request:\n  - actions:\n      - type: custom-response\n        config: {body: a, content: b}\n",
			[]string{"config.content", "two names of one field"}},
		{"enum", "on_http_request:\n  - actions:\n      - type: redirect\n        config: {to: /x, status_code: 304}\n", []string{"config.status_code", "one of 301, 302, 303, 307, 308"}},
		{"duration bound", "on_http_request:\n  - actions:\n      - type: http-request\n        config: {url: https://a.internal, timeout: 1m}\n", []string{"config.timeout", "at most 30s"}},
		{"nested unknown field", "on_http_request:\n  - actions:\n      - type: jwt-validation\n        config: {issuer: {allow_list: [{value: x, valu: y}]}, http: {tokens: []}, jws: {}}\n",
			[]string{"config.issuer.allow_list[0].valu", "unknown field"}},
		{"phase typo of an example", "on_http_respons: []", []string{"unknown phase"}},
		{"response function in the request phase", "on_http_request:\n  - expressions: [\"hasResHeader('x')\"]\n    actions: [{type: deny}]", []string{"hasResHeader"}},
		{"regex", "on_http_request:\n  - actions:\n      - type: url-rewrite\n        config: {from: '([a-', to: /}\n", []string{"config.from", "regular expression"}},
		{"json trailing", `{"on_http_request": []} {}`, []string{"data after"}},
		{"two yaml documents", "on_http_request: []\n---\non_tcp_connect: []\n", []string{"more than one document"}},
	}
	for _, c := range cases {
		err := Validate(context.Background(), "traffic_policy", c.doc)
		e, ok := api.AsError(err)
		if !ok || e.Status != 400 || e.Field != "traffic_policy" {
			t.Errorf("%s: %v, want a 400 naming traffic_policy", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(e.Msg, w) {
				t.Errorf("%s: message %q lacks %q", c.name, e.Msg, w)
			}
		}
	}
}

func FuzzValidate(f *testing.F) {
	for _, doc := range accepted {
		f.Add(doc)
	}
	for _, doc := range []string{"", "{", "on_http_request: [{actions: [{type: deny, config: {status_code: 1e400}}]}]", "a: &a [*a]",
		"on_http_request:\n  - expressions: ['${']\n    actions: [{type: log, config: {metadata: {m: '${x'}}}]"} {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		err := Validate(context.Background(), "traffic_policy", doc)
		if err == nil {
			return
		}
		if e, ok := api.AsError(err); !ok || e.Status != 400 || e.Field != "traffic_policy" {
			t.Fatalf("Validate(%q) = %v, not a 400 naming traffic_policy", doc, err)
		}
	})
}
