package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"tunnelapi/shared/platform/derrors"
)

// A dependency's failure is a 503 with Retry-After in the envelope, coded by whether a write may
// have been applied; the handler runs under the server's budget less ReplyMargin.
func TestDependencyFailures(t *testing.T) {
	for _, c := range []struct {
		err  error
		code string
	}{
		{fmt.Errorf("store.Commit: %w", derrors.ErrOutcomeUnknown), CodeOutcomeUnknown},
		{fmt.Errorf("store.GetMany: %w", derrors.ErrUnavailable), CodeUnavailable},
		{fmt.Errorf("wait: %w", context.DeadlineExceeded), CodeUnavailable},
	} {
		s := &Server{Budget: 2 * time.Second}
		var left time.Duration
		h := s.Handle(200, func(ctx context.Context, r *Request) (any, error) {
			d, _ := ctx.Deadline()
			left = time.Until(d)
			return nil, c.err
		})
		w := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/api_keys", nil)
		req.Header.Set("Authorization", "Bearer 2BxzRWYdf4fWcQOi6JZ7zaSN6Tc_7PvW3mHXzRpp3tUYxBNLU")
		h.ServeHTTP(w, req)
		var env envelope
		if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
			t.Fatal(err)
		}
		if w.Code != 503 || w.Header().Get("Retry-After") != "1" || env.ErrorCode != c.code || env.StatusCode != 503 || env.Details["retry_after"] != "1" {
			t.Errorf("%v: %d Retry-After %q %+v", c.err, w.Code, w.Header().Get("Retry-After"), env)
		}
		if left <= 0 || left > s.Budget-ReplyMargin {
			t.Errorf("handler's deadline %v away, want within %v", left, s.Budget-ReplyMargin)
		}
	}
}
