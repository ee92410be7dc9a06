package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Client sends JSON requests to a deployment: the operator's routes (Authorize is SignedBy) or
// the tenants' API (TenantAPI authorizes with a bearer token).
type Client struct {
	Base string // the deployment's base URL
	// Authorize adds a request's credentials; body is its payload (a signature covers it).
	Authorize func(r *http.Request, body []byte) error
	HTTP      *http.Client // nil is http.DefaultClient
}

// SignedBy authorizes a request by signing it with creds for region (Sign), as the operator's
// routes require.
func SignedBy(creds aws.Credentials, region string) func(*http.Request, []byte) error {
	return func(r *http.Request, body []byte) error {
		return Sign(r.Context(), r, body, creds, region, time.Now())
	}
}

// Do sends one request (body as JSON when not nil) to path, relative to Base or absolute (a
// next_page_uri), and returns its status and body, whatever the status.
func (c *Client) Do(ctx context.Context, method, path string, body any) (int, []byte, error) {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return 0, nil, err
		}
	}
	u := path
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		u = strings.TrimRight(c.Base, "/") + path
	}
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(raw))
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Authorize != nil {
		if err := c.Authorize(req, raw); err != nil {
			return 0, nil, err
		}
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, out, nil
}
