package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
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
	HTTP      *http.Client // nil is a client like http.DefaultClient; Do follows no redirect either way
}

// SignedBy authorizes a request by signing it with creds for region (Sign), as the operator's
// routes require.
func SignedBy(creds aws.Credentials, region string) func(*http.Request, []byte) error {
	return func(r *http.Request, body []byte) error {
		return Sign(r.Context(), r, body, creds, region, time.Now())
	}
}

// URL is path as a URL of Base's origin: path is an absolute path, taken under Base's own path,
// or a URL of Base's scheme and host (a next_page_uri). Anything that could reach another
// origin is refused (another scheme or host, "//host", userinfo such as "@host", a relative
// reference), and so is a path with a dot segment ("..", "."), which a server may resolve to
// another route than the one named.
func (c *Client) URL(path string) (string, error) {
	base, err := url.Parse(c.Base)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" || base.User != nil {
		return "", fmt.Errorf("operator: base URL %q is not an http(s) URL of a host", c.Base)
	}
	ref, err := url.Parse(path)
	if err != nil {
		return "", fmt.Errorf("operator: %q is no URL path: %v", path, err)
	}
	switch {
	case ref.IsAbs():
		if ref.Scheme != base.Scheme || ref.Host != base.Host || ref.User != nil || ref.Opaque != "" {
			return "", fmt.Errorf("operator: %q is not of the base URL's origin %s://%s", path, base.Scheme, base.Host)
		}
	case ref.Host != "" || ref.User != nil || !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//"):
		return "", fmt.Errorf("operator: %q is not a path of the base URL's origin", path)
	default:
		ref.Path = strings.TrimRight(base.Path, "/") + ref.Path
		ref.RawPath = ""
		ref.Scheme, ref.Host = base.Scheme, base.Host
	}
	for seg := range strings.SplitSeq(ref.Path, "/") {
		if seg == "." || seg == ".." {
			return "", fmt.Errorf("operator: %q has a dot segment", path)
		}
	}
	ref.Fragment, ref.RawFragment = "", ""
	return ref.String(), nil
}

// Do sends one request (body as JSON when not nil) to path, a path of Base's origin (URL), and
// returns its status and body, whatever the status. A redirect is not followed: it is the
// answer, so that no request carrying the credentials goes anywhere but where it was sent.
func (c *Client) Do(ctx context.Context, method, path string, body any) (int, []byte, error) {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return 0, nil, err
		}
	}
	u, err := c.URL(path)
	if err != nil {
		return 0, nil, err
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
	hc := http.Client{}
	if c.HTTP != nil {
		hc = *c.HTTP
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
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
