package celcheck

import "testing"

// FuzzAgreesWithCelGo: whatever the expression, the checker and cel-go agree on refusing it,
// or on its type and cost.
func FuzzAgreesWithCelGo(f *testing.F) {
	for _, e := range corpus {
		f.Add(e)
	}
	old, cur := oldEnv(f), newEnv()
	f.Fuzz(func(t *testing.T, src string) {
		want := oldOutcome(old, src)
		if got, err := newOutcome(cur, src); got != want {
			t.Fatalf("%q: got %s (%v), cel-go %s", src, got, err, want)
		}
	})
}
