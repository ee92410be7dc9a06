package trafficpolicy

import (
	"fmt"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/ext"
)

// namespaces are the variables the platform documents, with their first-level members; members
// deeper down (req.url.path, conn.client_ip.geo.location.city) are not checked, and action
// results (actions.ngrok.*) and set-vars variables (vars.*) are open-ended.
var namespaces = map[string][]string{
	"conn":     {"bytes_in", "bytes_out", "client_ip", "client_port", "server_ip", "server_port", "server_region", "ts", "tls", "geo", "k8s"},
	"endpoint": {"addr", "host", "id", "port", "protocol", "url"},
	"time":     {"now"},
	"req": {"content_encoding", "content_length", "content_type", "cookies", "headers", "host", "location", "method",
		"trailers", "ts", "url", "user_agent", "version"},
	"res":     {"content_encoding", "content_length", "content_type", "cookies", "headers", "location", "status_code", "trailers"},
	"actions": nil,
	"vars":    nil,
}

// phaseVars lists the namespaces available in each phase.
var phaseVars = map[string][]string{
	PhaseTCPConnect:   {"conn", "endpoint", "time", "actions", "vars"},
	PhaseHTTPRequest:  {"conn", "endpoint", "time", "actions", "vars", "req"},
	PhaseHTTPResponse: {"conn", "endpoint", "time", "actions", "vars", "req", "res"},
}

var (
	envOnce sync.Once
	envs    map[string]*cel.Env
	envErr  error
)

// env returns the CEL environment of a phase: its variables (dynamic, as the platform's values
// are both strings and objects, like req.url and req.url.path), the standard library with the
// string, list, encoder, math and set extensions, and the platform's macros.
func env(phase string) (*cel.Env, error) {
	envOnce.Do(func() {
		envs = map[string]*cel.Env{}
		for p, vars := range phaseVars {
			opts := []cel.EnvOption{ext.Strings(), ext.Lists(), ext.Encoders(), ext.Math(), ext.Sets()}
			for _, v := range vars {
				opts = append(opts, cel.Variable(v, cel.DynType))
			}
			opts = append(opts, functions(p)...)
			e, err := cel.NewEnv(opts...)
			if err != nil {
				envErr = fmt.Errorf("trafficpolicy: %s environment: %w", p, err)
				return
			}
			envs[p] = e
		}
	})
	return envs[phase], envErr
}

func fn(name string, overloads ...cel.FunctionOpt) cel.EnvOption {
	return cel.Function(name, overloads...)
}

func global(id string, args []*cel.Type, result *cel.Type) cel.FunctionOpt {
	return cel.Overload(id, args, result)
}

func member(id string, args []*cel.Type, result *cel.Type) cel.FunctionOpt {
	return cel.MemberOverload(id, args, result)
}

var (
	str     = cel.StringType
	strList = cel.ListType(cel.StringType)
	dyn     = cel.DynType
	b       = cel.BoolType
)

// functions declares the platform's macros (for compiling only: nothing is evaluated here).
func functions(phase string) []cel.EnvOption {
	hashes := []string{"crc32", "crc64", "md5", "sha1", "sha256", "sha512", "xxhash64"}
	opts := []cel.EnvOption{
		fn("inCidrRange", global("inCidrRange_dyn_dyn", []*cel.Type{dyn, dyn}, b)),
		fn("inCidrRanges", global("inCidrRanges_dyn_dyn", []*cel.Type{dyn, dyn}, b)),
		fn("basic_auth.encode", global("basic_auth_encode", []*cel.Type{str, str}, str)),
		fn("json.decode", global("json_decode", []*cel.Type{str}, dyn)), // json.encode comes with ext.Encoders
		fn("queryString.decode", global("queryString_decode", []*cel.Type{str}, dyn)),
		fn("queryString.encode", global("queryString_encode", []*cel.Type{dyn}, str)),
		fn("rand.double", global("rand_double", nil, cel.DoubleType)),
		fn("rand.int", global("rand_int", nil, cel.IntType), global("rand_int_int_int", []*cel.Type{cel.IntType, cel.IntType}, cel.IntType)),
		fn("secrets.get", global("secrets_get", []*cel.Type{str, str}, str)),
		fn("url.escape", global("url_escape", []*cel.Type{str}, str)),
		fn("url.unescape", global("url_unescape", []*cel.Type{str}, str)),
		fn("url.parse", global("url_parse", []*cel.Type{str}, dyn)),
		fn("decodeBase64", member("string_decodeBase64", []*cel.Type{str}, str)),
		fn("decodeJson", member("string_decodeJson", []*cel.Type{str}, dyn)),
		fn("decodeQueryString", member("string_decodeQueryString", []*cel.Type{str}, dyn)),
		fn("encodeBase64", member("string_encodeBase64", []*cel.Type{str}, str)),
		fn("escapeUrl", member("string_escapeUrl", []*cel.Type{str}, str)),
		fn("unescapeUrl", member("string_unescapeUrl", []*cel.Type{str}, str)),
		fn("isJson", member("string_isJson", []*cel.Type{str}, b)),
		fn("isPrivateIp", member("string_isPrivateIp", []*cel.Type{str}, b)),
		fn("isQueryString", member("string_isQueryString", []*cel.Type{str}, b)),
		fn("isURL", member("string_isURL", []*cel.Type{str}, b)),
		fn("lower", member("string_lower", []*cel.Type{str}, str)),
		fn("upper", member("string_upper", []*cel.Type{str}, str)),
		fn("parseUrl", member("string_parseUrl", []*cel.Type{str}, dyn)),
		fn("encodeJson", member("list_encodeJson", []*cel.Type{cel.ListType(dyn)}, str),
			member("map_encodeJson", []*cel.Type{cel.MapType(dyn, dyn)}, str)),
		fn("encodeQueryString", member("map_encodeQueryString", []*cel.Type{cel.MapType(dyn, dyn)}, str)),
	}
	for _, h := range hashes {
		opts = append(opts,
			fn("hash."+h, global("hash_"+h, []*cel.Type{str}, str), global("hash_"+h+"_format", []*cel.Type{str, str}, str)),
			fn(h, member("string_"+h, []*cel.Type{str}, str), member("string_"+h+"_format", []*cel.Type{str, str}, str)))
	}
	if phase != PhaseTCPConnect {
		opts = append(opts,
			fn("getReqHeader", global("getReqHeader_string", []*cel.Type{str}, strList)),
			fn("hasReqHeader", global("hasReqHeader_string", []*cel.Type{str}, b)),
			fn("getReqCookie", global("getReqCookie_string", []*cel.Type{str}, dyn)),
			fn("hasReqCookie", global("hasReqCookie_string", []*cel.Type{str}, b)),
			fn("getQueryParam", global("getQueryParam_string", []*cel.Type{str}, strList)),
			fn("hasQueryParam", global("hasQueryParam_string", []*cel.Type{str}, b)))
	}
	if phase == PhaseHTTPResponse {
		opts = append(opts,
			fn("getResHeader", global("getResHeader_string", []*cel.Type{str}, strList)),
			fn("hasResHeader", global("hasResHeader_string", []*cel.Type{str}, b)),
			fn("getResCookie", global("getResCookie_string", []*cel.Type{str}, dyn)),
			fn("hasResCookie", global("hasResCookie_string", []*cel.Type{str}, b)))
	}
	return opts
}

// envError is a failure to build an environment: a defect of this package, not of the input.
type envError struct{ error }

// compile checks one CEL expression in phase; boolean says whether it must be a condition.
func compile(phase, expr string, boolean bool) error {
	e, err := env(phase)
	if err != nil {
		return envError{err}
	}
	ast, iss := e.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return fmt.Errorf("%s", oneLine(iss.Err().Error()))
	}
	if boolean {
		if t := ast.OutputType(); t != cel.BoolType && t != cel.DynType {
			return fmt.Errorf("the expression is of type %s; an expression must be a condition (bool)", t)
		}
	}
	var bad string
	celast.PreOrderVisit(ast.NativeRep().Expr(), celast.NewExprVisitor(func(x celast.Expr) {
		if bad != "" || x.Kind() != celast.SelectKind {
			return
		}
		sel := x.AsSelect()
		if sel.Operand().Kind() != celast.IdentKind {
			return
		}
		ns := sel.Operand().AsIdent()
		fields, known := namespaces[ns]
		if !known || fields == nil {
			return
		}
		for _, f := range fields {
			if f == sel.FieldName() {
				return
			}
		}
		bad = fmt.Sprintf("%s.%s is not a variable of the %s phase (%s has %s)", ns, sel.FieldName(), phase, ns, strings.Join(fields, ", "))
	}))
	if bad != "" {
		return fmt.Errorf("%s", bad)
	}
	return nil
}

// oneLine folds cel-go's multi-line error (with its caret diagram) into one line.
func oneLine(s string) string {
	lines := strings.Split(s, "\n")
	var keep []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "|") {
			continue
		}
		keep = append(keep, t)
	}
	return strings.Join(keep, "; ")
}
