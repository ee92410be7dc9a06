package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

// TestPagesPastAMegabyte, against DynamoDB Local: a collection of items near DynamoDB's 400 KB
// limit, more than DynamoDB answers one Query with (1 MB), reads whole: a page holds its limit
// and reports more exactly when older items remain, pages walked by their last item return each
// item once, a page started from one of DynamoDB's answers ends short of its limit with more
// set and its walk still returns each item once, and QueryBelow and QueryAll return every item
// they are asked for.
func TestPagesPastAMegabyte(t *testing.T) {
	ctx := context.Background()
	s := testkit.Start(t)
	const n, size = 7, 300 << 10 // 2.1 MB: three of DynamoDB's answers
	var want []string            // newest first
	for i := range n {
		it := newThing("big", i)
		it.Name = strings.Repeat("x", size)
		if err := s.DB.Put(ctx, it); err != nil {
			t.Fatal(err)
		}
		want = append([]string{it.ID}, want...)
	}
	part := store.Collection("big", ids.APIKey)

	items, more, err := s.DB.PageQuery(ctx, part, "", 100)
	if err != nil || !slices.Equal(itemIDs(t, items), want) || more {
		t.Fatalf("a page of 100: %d of %d items, more=%v, %v", len(items), n, more, err)
	}
	items, more, err = s.DB.PageQuery(ctx, part, "", n-1)
	if err != nil || !slices.Equal(itemIDs(t, items), want[:n-1]) || !more {
		t.Fatalf("a page of %d: %d items, more=%v, %v", n-1, len(items), more, err)
	}

	for _, walk := range []struct {
		name               string
		limit              int
		read               func(ctx context.Context, partition, before string, limit int) ([]store.Item, bool, error)
		minPages, maxPages int
		fullPages          bool
	}{
		{"pages of 3", 3, s.DB.PageQuery, 3, 3, true},
		{"pages of 100 started: one answer each", 100, s.DB.PageQueryStart, 2, n, false},
		{"pages of 2 started", 2, s.DB.PageQueryStart, 4, 4, true},
	} {
		var got []string
		pages, before, more := 0, "", true
		for ; more && pages <= n; pages++ {
			items, m, err := walk.read(ctx, part, before, walk.limit)
			if err != nil {
				t.Fatal(err)
			}
			if more = m; walk.fullPages && more && len(items) != walk.limit {
				t.Errorf("%s: a page that is not the last holds %d items", walk.name, len(items))
			}
			page := itemIDs(t, items)
			got = append(got, page...)
			if len(page) > 0 {
				before = page[len(page)-1]
			}
		}
		if more || pages < walk.minPages || pages > walk.maxPages || !slices.Equal(got, want) {
			t.Errorf("%s: the walk of %d pages (more=%v at the end) returned %d of %d items (%v)", walk.name, pages, more, len(got), n, got)
		}
		t.Logf("%s: %d pages", walk.name, pages)
	}

	below, err := s.DB.QueryBelow(ctx, part, want[0], n-2)
	if err != nil || fmt.Sprint(itemIDs(t, below)) != fmt.Sprint(reversed(want[2:])) {
		t.Errorf("QueryBelow of %d: %d items, %v", n-2, len(below), err)
	}
	all, err := s.DB.QueryAll(ctx, part)
	if err != nil || len(all) != n {
		t.Errorf("QueryAll: %d of %d items, %v", len(all), n, err)
	}
}

func reversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}
