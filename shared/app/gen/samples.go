package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/resource"
)

// event is an API Gateway HTTP API (payload v2) event, its fields in the order the sample
// events write them.
type event struct {
	Version         string          `json:"version"`
	RouteKey        string          `json:"routeKey"`
	RawPath         string          `json:"rawPath"`
	RawQueryString  string          `json:"rawQueryString"`
	Headers         headers         `json:"headers"`
	RequestContext  requestContext  `json:"requestContext"`
	IsBase64Encoded bool            `json:"isBase64Encoded"`
	Body            string          `json:"body,omitempty"`
	PathParameters  *pathParameters `json:"pathParameters,omitempty"`
}

type headers struct {
	Authorization string `json:"authorization"`
	NgrokVersion  string `json:"ngrok-version"`
	Host          string `json:"host"`
	UserAgent     string `json:"user-agent"`
	ContentType   string `json:"content-type,omitempty"`
}

type requestContext struct {
	AccountID    string `json:"accountId"`
	APIID        string `json:"apiId"`
	DomainName   string `json:"domainName"`
	DomainPrefix string `json:"domainPrefix"`
	HTTP         struct {
		Method    string `json:"method"`
		Path      string `json:"path"`
		Protocol  string `json:"protocol"`
		SourceIP  string `json:"sourceIp"`
		UserAgent string `json:"userAgent"`
	} `json:"http"`
	RequestID string `json:"requestId"`
	RouteKey  string `json:"routeKey"`
	Stage     string `json:"stage"`
	Time      string `json:"time"`
	TimeEpoch int64  `json:"timeEpoch"`
}

type pathParameters struct {
	ID string `json:"id"`
}

// sample is one skeleton request of a walk through a family's operations.
type sample struct {
	op           resource.Operation
	name, method string
	item         bool   // the route names the created resource ({id})
	query, body  string // the body a JSON object the author completes
}

// walk is the order of the skeleton samples: create, list, get, update, delete.
var walk = []sample{
	{resource.OpCreate, "create", "POST", false, "", `{"description": "sample"}`},
	{resource.OpList, "list", "GET", false, "limit=10", ""},
	{resource.OpGet, "get", "GET", true, "", ""},
	{resource.OpUpdate, "update", "PATCH", true, "", `{"description": "sample, updated"}`},
	{resource.OpDelete, "delete", "DELETE", true, "", ""},
}

// samples are the skeleton sample events of f: one per operation each of its families serves,
// named in walk order (the bodies hold only a description: its author writes the rest).
func samples(f app.Function) map[string][]byte {
	type named struct {
		name string
		ev   event
	}
	var all []named
	for i, d := range f.Families {
		for _, s := range walk {
			if !d.Offers(s.op) {
				continue
			}
			name := s.name
			if i > 0 {
				name += "-" + d.Path[strings.LastIndex(d.Path, "/")+1:]
			}
			all = append(all, named{name, skeleton(d.Path, s)})
		}
	}
	out := map[string][]byte{}
	width := len(fmt.Sprint(len(all)))
	for i, n := range all {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(n.ev); err != nil {
			panic(err) // the event holds only strings, a bool and an integer
		}
		out[fmt.Sprintf("%0*d-%s.json", width, i+1, n.name)] = b.Bytes()
	}
	return out
}

// skeleton is the event of s on the family at path, with the placeholders app.FillSample fills.
func skeleton(path string, s sample) event {
	const host = "abc123.execute-api.us-east-1.amazonaws.com"
	pattern, raw := path, path
	ev := event{Version: "2.0", RawQueryString: s.query, Body: s.body}
	if s.item {
		pattern, raw = path+"/{id}", path+"/"+app.IDPlaceholder
		ev.PathParameters = &pathParameters{ID: app.IDPlaceholder}
	}
	ev.RouteKey, ev.RawPath = s.method+" "+pattern, raw
	ev.Headers = headers{Authorization: "Bearer " + app.TokenPlaceholder, NgrokVersion: "2", Host: host, UserAgent: "ngrok-api-go/1.0"}
	if s.body != "" {
		ev.Headers.ContentType = "application/json"
	}
	rc := &ev.RequestContext
	rc.AccountID, rc.APIID, rc.DomainName, rc.DomainPrefix = "123456789012", "abc123", host, "abc123"
	rc.HTTP.Method, rc.HTTP.Path, rc.HTTP.Protocol, rc.HTTP.SourceIP, rc.HTTP.UserAgent = s.method, raw, "HTTP/1.1", "203.0.113.7", "ngrok-api-go/1.0"
	rc.RequestID, rc.RouteKey, rc.Stage, rc.Time, rc.TimeEpoch = "sample", ev.RouteKey, "$default", "22/Nov/2026:02:00:00 +0000", 1795140000000
	return ev
}
