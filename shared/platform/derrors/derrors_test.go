package derrors_test

import (
	"errors"
	"testing"

	"tunnelapi/shared/platform/derrors"
)

func TestWrap(t *testing.T) {
	sentinel := errors.New("gone")
	f := func(fail bool) (err error) {
		defer derrors.Wrap(&err, "op(%s)", "x")
		if fail {
			return sentinel
		}
		return nil
	}
	if err := f(false); err != nil {
		t.Errorf("success wrapped: %v", err)
	}
	err := f(true)
	if err == nil || err.Error() != "op(x): gone" || !errors.Is(err, sentinel) {
		t.Errorf("err = %v", err)
	}
}
