package chaos

import "testing"

// delivered compares what reached a sink (got: event id → times) with the committed events
// (want): each committed event arrived, none other did. It returns how many deliveries were
// repeats, which a sink deduping on the event id drops.
func delivered(t *testing.T, want map[string]bool, got map[string]int) (repeats int) {
	t.Helper()
	for id, n := range got {
		if !want[id] {
			t.Errorf("%s reached the sink but was never committed", id)
		}
		repeats += n - 1
	}
	for id := range want {
		if got[id] == 0 {
			t.Errorf("committed event %s never reached the sink", id)
		}
	}
	return repeats
}
