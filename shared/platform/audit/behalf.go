package audit

import (
	"net/http"
	"net/url"

	"tunnelapi/shared/platform/api"
)

// OnBehalf is who a change made later, outside any request, is recorded as: the caller of the
// request that asked for it and the base URL that request came to. A worker finishing what a
// request started (the certificate worker storing the certificate a policy asked for) records
// its events with Request, so they have the principal and the resource URIs an HTTP mutation
// of the same resource would have.
type OnBehalf struct {
	PrincipalID  string `dynamodbav:"principal"`
	Subject      string `dynamodbav:"subject"`
	CredentialID string `dynamodbav:"credential"`
	BaseURL      string `dynamodbav:"base_url"`
}

// OnBehalfOf captures r's caller and base URL (nil without a caller).
func OnBehalfOf(r *api.Request) *OnBehalf {
	c := r.Caller()
	if c == nil {
		return nil
	}
	return &OnBehalf{PrincipalID: c.PrincipalID, Subject: c.Subject, CredentialID: c.CredentialID, BaseURL: r.BaseURL()}
}

// fallbackBase is the base URL of events recorded for an item that holds no OnBehalf (one
// written before it was recorded): the URIs keep their paths on a host that is never served.
const fallbackBase = "https://api.invalid"

// Request is a request standing for o, acting in account: what Record and the families' Render
// need to record an event as o's request would have. A nil o is the service itself, with no
// principal.
func (o *OnBehalf) Request(account string) *api.Request {
	who := OnBehalf{Subject: "automation", BaseURL: fallbackBase}
	if o != nil {
		who = *o
	}
	u, err := url.Parse(who.BaseURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		u, _ = url.Parse(fallbackBase)
	}
	// The scheme travels as a proxy would forward it, so BaseURL gives back exactly who.BaseURL.
	h := &http.Request{Method: http.MethodPost, URL: &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}, Host: u.Host,
		Header: http.Header{"X-Forwarded-Proto": {u.Scheme}}}
	return api.RequestAs(h, api.Caller{AccountID: account, PrincipalID: who.PrincipalID, CredentialID: who.CredentialID, Subject: who.Subject})
}
