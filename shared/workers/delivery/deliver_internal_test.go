package delivery

import (
	"strings"
	"testing"
	"time"

	"github.com/segmentio/ksuid"

	"tunnelapi/shared/platform/ids"
)

// idTime reads the time ids.Parse reads from every well-formed event id, at both ends of the
// KSUID range too, and refuses what ids.Parse refuses: another kind, a wrong shape, and 27
// digits past a KSUID's 20 bytes.
func TestIDTime(t *testing.T) {
	check := func(id string) {
		t.Helper()
		got, ok := idTime(id, ids.Event)
		kind, k, err := ids.Parse(id)
		if want := err == nil && kind == ids.Event; ok != want {
			t.Fatalf("%s: idTime ok %v, ids.Parse %q %v", id, ok, kind, err)
		}
		if ok && !got.Equal(k.Time()) {
			t.Fatalf("%s: idTime %v, ids.Parse %v", id, got, k.Time())
		}
	}
	for range 10000 {
		check(ids.New(ids.Event))
	}
	for _, k := range []ksuid.KSUID{ksuid.Nil, ksuid.Max} {
		check(ids.Event + "_" + k.String())
	}
	for _, id := range []string{ids.New(ids.Account), ids.Event + "_" + strings.Repeat("z", 27), ids.Event + "_" + strings.Repeat("0", 26),
		ids.Event + "_" + ksuid.Max.String()[:26] + "W", ids.Event + "_" + strings.Repeat("-", 27), ""} {
		check(id)
	}
	if got, _ := idTime(ids.Event+"_"+ksuid.Max.String(), ids.Event); !got.Equal(time.Unix(ksuidEpoch+1<<32-1, 0)) {
		t.Fatalf("the largest KSUID's time is %v", got)
	}
}
