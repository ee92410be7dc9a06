package principals_test

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

// botCycles is how many bot users TestAccountItemStaysSmall creates and deletes under make
// test: enough to pass 4 KB several times over had each left a trace in the account item.
// BOT_CYCLES overrides it (the acceptance run: BOT_CYCLES=20000).
const botCycles = 200

// TestAccountItemStaysSmall: principals coming and going leave the account item, which every
// request reads and pays for by size, as small as it was. Bot users are created (one of each
// ten with an API key, and deactivated) and deleted through the API, by several clients at
// once; the account item is read back as the cycles go and stays under 4 KB, one read unit,
// and ends byte for byte the size it began: no cycle leaves anything in it, however many run.
// The deleted bots' keys are still refused.
func TestAccountItemStaysSmall(t *testing.T) {
	cycles := botCycles
	if v := os.Getenv("BOT_CYCLES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("BOT_CYCLES=%q: want a positive number", v)
		}
		cycles = n
	}
	s := testkit.Start(t, principals.BotUsersDescriptor, principals.APIKeysDescriptor)
	a := s.NewAccount(t)
	size := func() int {
		items, err := s.DB.GetMany(t.Context(), store.AccountKey(a.AccountID))
		if err != nil || items[0] == nil {
			t.Fatalf("account item: %v, %v", items, err)
		}
		return store.ItemSize(items[0])
	}
	const limit = 4096
	start, initial := time.Now(), size()

	var next, done atomic.Int64
	var mu sync.Mutex
	var keys []string // tokens of deleted bots
	var failed atomic.Bool
	cycle := func(i int64) error {
		bot := a.Do(t, "POST", "/bot_users", map[string]any{"name": "ephemeral"})
		if bot.Status != http.StatusCreated {
			return fmt.Errorf("create: %d %s", bot.Status, bot.Body)
		}
		id := bot.JSON(t)["id"].(string)
		if i%10 == 0 {
			k := a.Do(t, "POST", "/api_keys", map[string]any{"owner_id": id})
			if k.Status != http.StatusCreated {
				return fmt.Errorf("key: %d %s", k.Status, k.Body)
			}
			if res := a.Do(t, "PATCH", "/bot_users/"+id, map[string]any{"active": false}); res.Status != http.StatusOK {
				return fmt.Errorf("deactivate: %d %s", res.Status, res.Body)
			}
			mu.Lock()
			keys = append(keys, k.JSON(t)["token"].(string))
			mu.Unlock()
		}
		if res := a.Do(t, "DELETE", "/bot_users/"+id, nil); res.Status != http.StatusNoContent {
			return fmt.Errorf("delete: %d %s", res.Status, res.Body)
		}
		return nil
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(cycles) && !failed.Load(); i = next.Add(1) {
				if err := cycle(i); err != nil {
					failed.Store(true)
					t.Errorf("cycle: %v", err)
					return
				}
				if n := done.Add(1); n%50 == 0 {
					if sz := size(); sz >= limit {
						failed.Store(true)
						t.Errorf("after %d bot cycles the account item is %d bytes (it was %d), not under %d", n, sz, initial, limit)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	final := size()
	t.Logf("%d bot create/delete cycles in %v; account item %d bytes before, %d after", done.Load(), time.Since(start).Round(time.Millisecond), initial, final)
	if final >= limit || final != initial {
		t.Fatalf("the account item grew from %d to %d bytes over %d bot cycles", initial, final, done.Load())
	}
	for _, k := range keys[:min(len(keys), 20)] {
		s.Do(t, "GET", "/api_keys", k, nil).ExpectError(t, http.StatusForbidden, "ERR_NGROK_203", "")
	}
}
