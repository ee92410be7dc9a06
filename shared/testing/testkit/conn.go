package testkit

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// Conn is one kept-alive HTTP/1.1 connection to a server on which the calling
// goroutine itself writes each request and reads its answer (Request.Write, http.ReadResponse),
// for benchmarks that time what a request costs a client of the server. http.Client hands each
// request to a writer goroutine and each answer from a reader goroutine of the connection, two
// handoffs per request on the client's side that the server takes no part in. A Conn is used by
// one goroutine at a time.
type Conn struct {
	url  string
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
}

// Dial opens a Conn to the stack's server, closed when the test ends.
func (s *Stack) Dial(tb testing.TB) *Conn {
	tb.Helper()
	return Dial(tb, s.Server.URL)
}

// Dial opens a Conn to the server at url (http://host:port), closed when the test ends.
func Dial(tb testing.TB, url string) *Conn {
	tb.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return &Conn{url: url, conn: c, r: bufio.NewReader(c), w: bufio.NewWriter(c)}
}

// Do sends a request as Stack.Do does (token as the bearer, none when empty; body nil, a string,
// bytes or a value marshalled to JSON) and reads its whole answer.
func (c *Conn) Do(tb testing.TB, method, path, token string, body any) *Response {
	tb.Helper()
	req, err := NewRequest(method, c.url+path, token, body)
	if err != nil {
		tb.Fatal(err)
	}
	if err := req.Write(c.w); err != nil {
		tb.Fatal(err)
	}
	if err := c.w.Flush(); err != nil {
		tb.Fatal(err)
	}
	res, err := http.ReadResponse(c.r, req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	if res.Close {
		tb.Fatalf("%s %s: the server closed the connection", method, path)
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: b}
}
