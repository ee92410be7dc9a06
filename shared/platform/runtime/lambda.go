package runtime

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"strings"
	"unicode/utf8"

	lambdaevents "github.com/aws/aws-lambda-go/events"
)

// The Lambda side of the handlers: an API Gateway HTTP API (payload v2) event becomes an
// *http.Request for the same mux the local server serves, and what the handler writes becomes
// the event's response. It converts as aws-lambda-go-api-proxy's httpadapter (v0.16.2) does,
// which the tests hold it to, without that adapter's per-request extras nothing here reads (two
// maps splitting the headers, a copy of the request carrying the API Gateway context, a channel
// list for CloseNotify): every request pays for the conversion.

// customHostVariable names the environment variable that replaces the https://<domain> part of
// request URLs, as in the adapter.
const customHostVariable = "GO_API_HOST"

// singletonHeaders are the header fields whose value is never split at commas (the adapter's
// list); every other field's value is split into one value per comma-separated element.
var singletonHeaders = map[string]bool{
	"Content-Type": true, "Content-Disposition": true, "Content-Length": true, "User-Agent": true,
	"Referer": true, "Host": true, "Authorization": true, "Proxy-Authorization": true,
	"If-Modified-Since": true, "If-Unmodified-Since": true, "From": true, "Location": true,
	"Max-Forwards": true,
}

// proxy returns the Lambda handler serving h.
func proxy(h http.Handler) func(context.Context, lambdaevents.APIGatewayV2HTTPRequest) (lambdaevents.APIGatewayV2HTTPResponse, error) {
	return func(ctx context.Context, ev lambdaevents.APIGatewayV2HTTPRequest) (lambdaevents.APIGatewayV2HTTPResponse, error) {
		req, err := eventRequest(ctx, ev)
		if err != nil {
			return lambdaevents.APIGatewayV2HTTPResponse{StatusCode: http.StatusGatewayTimeout}, fmt.Errorf("runtime: convert the event to a request: %w", err)
		}
		w := &eventResponse{header: make(http.Header, 4), status: noStatus}
		h.ServeHTTP(w, req)
		res, err := w.response()
		if err != nil {
			return lambdaevents.APIGatewayV2HTTPResponse{StatusCode: http.StatusGatewayTimeout}, fmt.Errorf("runtime: build the response: %w", err)
		}
		return res, nil
	}
}

// eventRequest is the request an event describes.
func eventRequest(ctx context.Context, ev lambdaevents.APIGatewayV2HTTPRequest) (*http.Request, error) {
	body := []byte(ev.Body)
	if ev.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(ev.Body)
		if err != nil {
			return nil, err
		}
		body = b
	}
	path := ev.RawPath
	if path == "" {
		path = ev.RequestContext.HTTP.Path
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	server := "https://" + ev.RequestContext.DomainName
	if custom, ok := os.LookupEnv(customHostVariable); ok {
		server = custom
	}
	target := server + path
	if ev.RawQueryString != "" {
		target += "?" + ev.RawQueryString
	} else if len(ev.QueryStringParameters) > 0 {
		q := url.Values{}
		for k, v := range ev.QueryStringParameters {
			q.Add(k, v)
		}
		target += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, strings.ToUpper(ev.RequestContext.HTTP.Method), target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.RemoteAddr = ev.RequestContext.HTTP.SourceIP
	req.Header = make(http.Header, len(ev.Headers)+1)
	for _, c := range ev.Cookies {
		req.Header.Add("Cookie", c)
	}
	// Every field's values share one array, as net/http's own parser does; a field seen twice
	// (two spellings of its name, or a cookie) appends past its slice's capacity, into an array
	// of its own.
	vals := make([]string, 0, len(ev.Headers))
	for k, v := range ev.Headers {
		ck := textproto.CanonicalMIMEHeaderKey(k)
		start := len(vals)
		if singletonHeaders[ck] {
			vals = append(vals, v)
		} else {
			for {
				elem, rest, more := strings.Cut(v, ",")
				vals = append(vals, strings.Trim(elem, " "))
				if !more {
					break
				}
				v = rest
			}
		}
		if prev, ok := req.Header[ck]; ok {
			req.Header[ck] = append(prev, vals[start:]...)
		} else {
			req.Header[ck] = vals[start:len(vals):len(vals)]
		}
	}
	req.RequestURI = req.URL.RequestURI()
	return req, nil
}

// noStatus is a response's status before the handler sets one.
const noStatus = -1

// eventResponse is the http.ResponseWriter that collects an event's response.
type eventResponse struct {
	header http.Header
	body   bytes.Buffer
	status int
}

// Header implements http.ResponseWriter.
func (w *eventResponse) Header() http.Header { return w.header }

// WriteHeader implements http.ResponseWriter: the last status written is the response's.
func (w *eventResponse) WriteHeader(status int) { w.status = status }

// Write implements http.ResponseWriter; a body written without a Content-Type gets the one
// http.DetectContentType sniffs.
func (w *eventResponse) Write(b []byte) (int, error) {
	if w.status == noStatus {
		w.status = http.StatusOK
	}
	if w.header.Get("Content-Type") == "" {
		w.header.Add("Content-Type", http.DetectContentType(b))
	}
	return w.body.Write(b)
}

// response is the event response: the body as text when it is UTF-8 (base64 otherwise),
// multiple values of a header joined with commas, Set-Cookie fields as the cookies.
func (w *eventResponse) response() (lambdaevents.APIGatewayV2HTTPResponse, error) {
	if w.status == noStatus {
		return lambdaevents.APIGatewayV2HTTPResponse{}, errors.New("the handler set no status")
	}
	res := lambdaevents.APIGatewayV2HTTPResponse{StatusCode: w.status, Headers: make(map[string]string, len(w.header)), Cookies: []string{}}
	if b := w.body.Bytes(); utf8.Valid(b) {
		res.Body = string(b)
	} else {
		res.Body, res.IsBase64Encoded = base64.StdEncoding.EncodeToString(b), true
	}
	for k, vs := range w.header {
		if strings.EqualFold(k, "Set-Cookie") {
			res.Cookies = append(res.Cookies, vs...)
			continue
		}
		if len(vs) == 1 {
			res.Headers[k] = vs[0]
		} else {
			res.Headers[k] = strings.Join(vs, ",")
		}
	}
	return res, nil
}
