package access

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
)

func TestCheckPolicyIDs(t *testing.T) {
	p1, p2 := ids.New(ids.IPPolicy), ids.New(ids.IPPolicy)
	many := func(n int, distinct int) []string {
		pool := make([]string, distinct)
		for i := range pool {
			pool[i] = ids.New(ids.IPPolicy)
		}
		out := make([]string, n)
		for i := range out {
			out[i] = pool[i%distinct]
		}
		return out
	}
	cases := []struct {
		name string
		in   []string
		want []string
		msg  string // part of the refusal's message
	}{
		{"one", []string{p1}, []string{p1}, ""},
		{"repeats removed, order kept", []string{p2, p1, p2, p1}, []string{p2, p1}, ""},
		{"at the limit", many(MaxPoliciesPerRestriction, MaxPoliciesPerRestriction), nil, ""},
		{"at the limit with repeats", many(MaxPoliciesPerRestriction, 3), nil, ""},
		{"empty", []string{}, nil, "at least one"},
		{"not an id", []string{p1, "nope"}, nil, "ip_policy_ids[1]"},
		// The limit applies to the list as sent, before repeats are looked for.
		{"over the limit with repeats", many(MaxPoliciesPerRestriction+1, 2), nil, fmt.Sprintf("lists %d ids; the limit is %d", MaxPoliciesPerRestriction+1, MaxPoliciesPerRestriction)},
		{"29,000 ids", many(29000, 29000), nil, "the limit is"},
		{"29,000 ids, the last not an id", append(many(28999, 1), "nope"), nil, "the limit is"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := checkPolicyIDs(c.in)
			if c.msg != "" {
				e, ok := api.AsError(err)
				if !ok || e.Status != 400 || e.Field != "ip_policy_ids" || !strings.Contains(e.Msg, c.msg) {
					t.Fatalf("got %v, want a 400 naming ip_policy_ids with %q", err, c.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := c.want
			if want == nil {
				seen := map[string]bool{}
				for _, p := range c.in {
					if !seen[p] {
						seen[p] = true
						want = append(want, p)
					}
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %v, want %v", got, want)
			}
		})
	}
}

// BenchmarkCheckPolicyIDs measures refusing a list far over the limit against accepting one at
// it: the refusal must not grow with the list.
func BenchmarkCheckPolicyIDs(b *testing.B) {
	for _, n := range []int{MaxPoliciesPerRestriction, 29000} {
		in := make([]string, n)
		for i := range in {
			in[i] = ids.New(ids.IPPolicy)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				checkPolicyIDs(in)
			}
		})
	}
}
