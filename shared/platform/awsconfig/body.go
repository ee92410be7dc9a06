package awsconfig

import (
	"bytes"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// memoryBodies is the HTTP client of the SDK clients New configures: the SDK's default client,
// given each request's body as an in-memory reader that net/http recognises.
//
// The SDK hands net/http a body of its own type, which net/http treats as a stream: it flushes
// the request's header on its own, writes the body after it (two writes, two TCP segments),
// then reads the body once more to find any excess. The SDK closes that body as soon as the
// response's header arrives, and once closed it answers the excess read with io.EOF as an
// error, so when the answer comes first (a busy machine's usual case: the server only needed
// the body) the transport drops the connection after a call that succeeded, and the next call
// dials a new one (a TCP and, in AWS, a TLS handshake). A body held in a *bytes.Reader is sent
// with its header in one write and its excess read ends at once.
type memoryBodies struct{ c aws.HTTPClient }

// Do implements aws.HTTPClient. A body of unknown length is sent as it came.
func (m memoryBodies) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody && r.ContentLength > 0 {
		b := make([]byte, r.ContentLength)
		_, err := io.ReadFull(r.Body, b)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	return m.c.Do(r)
}
