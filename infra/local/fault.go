package main

import (
	"fmt"
	"net/http"
	"os"
)

// crashAfterCommit makes the process exit right after a mutation (POST, PATCH, DELETE) has
// committed: at "before-response" when its successful status is about to be written (the
// client gets no answer), at "after-response" once the whole response is written. Any other
// value leaves next as it is.
func crashAfterCommit(at string, next http.Handler) http.Handler {
	if at != "before-response" && at != "after-response" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		cw := &commitWatch{ResponseWriter: w, before: at == "before-response"}
		next.ServeHTTP(cw, r)
		if cw.committed {
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			crash(at)
		}
	})
}

// commitWatch sees the status a handler writes: a 2xx to a mutation means it committed.
type commitWatch struct {
	http.ResponseWriter
	before, committed bool
}

func (c *commitWatch) WriteHeader(status int) {
	if status >= 200 && status < 300 {
		c.committed = true
		if c.before {
			crash("before-response")
		}
	}
	c.ResponseWriter.WriteHeader(status)
}

func crash(at string) {
	fmt.Fprintf(os.Stderr, "local: FAULT_CRASH_AT=%s: exiting after a commit\n", at)
	os.Exit(3)
}
