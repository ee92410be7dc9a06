package domains_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m, checkGuards, checkCover) }

// checkGuards is the package's table invariant: every reserved address holds exactly the guard
// of its addr, and every address guard belongs to a reservation that holds it.
func checkGuards(s *testkit.Stack) error {
	items, err := s.Items(context.Background())
	if err != nil {
		return err
	}
	guards := map[string]string{} // addr -> reservation id
	addrs := map[string]string{}  // reservation id -> addr
	for _, it := range items {
		var row struct {
			store.Key
			ID   string `dynamodbav:"id"`
			Addr string `dynamodbav:"addr"`
		}
		if err := store.Unmarshal(it, &row); err != nil {
			return err
		}
		switch {
		case strings.HasPrefix(row.PK, "U#tcp_addr#"):
			guards[strings.TrimPrefix(row.PK, "U#tcp_addr#")] = row.ID
		case strings.HasPrefix(row.SK, "ra_"):
			addrs[row.ID] = row.Addr
		}
	}
	for id, addr := range addrs {
		if guards[addr] != id {
			return fmt.Errorf("reserved address %s holds %s, whose guard names %q", id, addr, guards[addr])
		}
	}
	for addr, id := range guards {
		if addrs[id] != addr {
			return fmt.Errorf("the guard of %s names %s, which does not hold it", addr, id)
		}
	}
	return nil
}

func TestReservedAddrsConformance(t *testing.T) {
	s := testkit.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: domains.ReservedAddrsDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			return map[string]any{"description": fmt.Sprintf("addr %d", n), "region": "eu"}
		},
		Update:      map[string]any{"description": "ssh", "metadata": "m"},
		UpdateWants: map[string]any{"description": "ssh", "metadata": "m", "region": "eu"},
	})
}

func TestReservedAddrDefaultsAndShape(t *testing.T) {
	_, a := testkit.AppAccount(t)
	got := a.Do(t, "POST", "/reserved_addrs", map[string]any{}).Expect(t, http.StatusCreated)
	if got["region"] != "us" || !strings.HasPrefix(got["addr"].(string), "tcp.us."+config.Default("BASE_DOMAIN")+":") {
		t.Fatalf("default reservation %v, want region us of the default pools", got)
	}
	// addr and region are fixed at creation.
	path := "/reserved_addrs/" + got["id"].(string)
	a.Do(t, "PATCH", path, map[string]any{"addr": "x:1"}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_214", "addr")
	a.Do(t, "PATCH", path, map[string]any{"region": "eu"}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_214", "region")
	if again := a.Do(t, "GET", path, nil).Expect(t, http.StatusOK); again["addr"] != got["addr"] || again["region"] != "us" {
		t.Fatalf("GET %v after refused PATCHes, created %v", again, got)
	}
}

// Every bad input gets its code, names its field and stores nothing.
func TestReservedAddrBadInput(t *testing.T) {
	_, a := testkit.AppAccount(t)
	id := a.Do(t, "POST", "/reserved_addrs", map[string]any{"description": "keep"}).Expect(t, http.StatusCreated)["id"].(string)
	long := strings.Repeat("x", 256)
	cases := []struct {
		name, method string
		body         any
		code, field  string
	}{
		{"unknown region", "POST", map[string]any{"region": "mars"}, "ERR_NGROK_500", "region"},
		{"empty region", "POST", map[string]any{"region": ""}, "ERR_NGROK_500", "region"},
		{"region in capitals", "POST", map[string]any{"region": "US"}, "ERR_NGROK_500", "region"},
		{"region not a string", "POST", map[string]any{"region": 1}, "ERR_NGROK_215", "region"},
		{"long description", "POST", map[string]any{"description": long}, "ERR_NGROK_504", "description"},
		{"long metadata", "POST", map[string]any{"metadata": strings.Repeat("m", 4097)}, "ERR_NGROK_505", "metadata"},
		{"addr chosen by the client", "POST", map[string]any{"addr": "tcp.us.example.com:10000"}, "ERR_NGROK_214", "addr"},
		{"long description on update", "PATCH", map[string]any{"description": long}, "ERR_NGROK_504", "description"},
		{"long metadata on update", "PATCH", map[string]any{"metadata": strings.Repeat("m", 4097)}, "ERR_NGROK_505", "metadata"},
		{"empty update", "PATCH", map[string]any{}, "ERR_NGROK_506", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := "/reserved_addrs"
			if c.method == "PATCH" {
				path += "/" + id
			}
			a.Do(t, c.method, path, c.body).ExpectError(t, http.StatusBadRequest, c.code, c.field)
		})
	}
	ids, _ := a.WalkPages(t, "/reserved_addrs", "reserved_addrs")
	if len(ids) != 1 {
		t.Fatalf("%d reservations stored, want 1", len(ids))
	}
	if got := a.Do(t, "GET", "/reserved_addrs/"+id, nil).Expect(t, http.StatusOK); got["description"] != "keep" || got["metadata"] != nil {
		t.Fatalf("refused updates changed the reservation: %v", got)
	}
}

// poolStack serves reserved addresses on a fresh table with the address pools pools.
func poolStack(t *testing.T, pools string) *testkit.Stack {
	t.Setenv("ADDR_POOLS", pools)
	return testkit.Start(t, domains.ReservedAddrsDescriptor)
}

// 200 concurrent reservations from a pool barely larger get 200 distinct addresses of the pool,
// each held by exactly one guard.
func TestConcurrentReservationsGetDistinctAddrs(t *testing.T) {
	s := poolStack(t, "us=a.tcp.example.net,b.tcp.example.net:20000-20149")
	accounts := []*testkit.Account{s.NewAccount(t), s.NewAccount(t)}
	const n = 200
	responses := testkit.AtOnce(n, func(i int) *testkit.Response {
		return accounts[i%2].Do(t, "POST", "/reserved_addrs", map[string]any{"description": fmt.Sprint(i)})
	})
	seen := map[string]int{}
	for i, res := range responses {
		if res.Status != http.StatusCreated {
			t.Fatalf("reservation %d: %d %s", i, res.Status, res.Body)
		}
		addr := res.JSON(t)["addr"].(string)
		host, port, _ := strings.Cut(addr, ":")
		if (host != "a.tcp.example.net" && host != "b.tcp.example.net") || port < "20000" || port > "20149" || len(port) != 5 {
			t.Fatalf("reservation %d got %s, outside the pool", i, addr)
		}
		if j, dup := seen[addr]; dup {
			t.Fatalf("reservations %d and %d both got %s", j, i, addr)
		}
		seen[addr] = i
	}
	if err := checkGuards(s); err != nil {
		t.Fatal(err)
	}
}

// A full pool refuses with 503 until an address is released; the released one is handed out
// again only then.
func TestExhaustedPool(t *testing.T) {
	s := poolStack(t, "eu=x.tcp.example.net:30000-30002")
	a, b := s.NewAccount(t), s.NewAccount(t)
	var ids []string
	held := map[string]bool{}
	for i := 0; i < 3; i++ {
		got := a.Do(t, "POST", "/reserved_addrs", map[string]any{"region": "eu"}).Expect(t, http.StatusCreated)
		ids = append(ids, got["id"].(string))
		held[got["addr"].(string)] = true
	}
	if len(held) != 3 {
		t.Fatalf("three reservations hold %v", held)
	}
	b.Do(t, "POST", "/reserved_addrs", map[string]any{"region": "eu"}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_503", "region")
	// A region with no pool has nothing to give either.
	b.Do(t, "POST", "/reserved_addrs", map[string]any{"region": "us"}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_503", "region")
	freed := a.Do(t, "GET", "/reserved_addrs/"+ids[1], nil).Expect(t, http.StatusOK)["addr"].(string)
	a.Do(t, "DELETE", "/reserved_addrs/"+ids[1], nil).Expect(t, http.StatusNoContent)
	got := b.Do(t, "POST", "/reserved_addrs", map[string]any{"region": "eu"}).Expect(t, http.StatusCreated)
	if got["addr"] != freed {
		t.Fatalf("after releasing %s the pool handed out %v", freed, got["addr"])
	}
	if list, _ := b.WalkPages(t, "/reserved_addrs", "reserved_addrs"); len(list) != 1 {
		t.Fatalf("account B holds %d reservations, want 1", len(list))
	}
	if err := checkGuards(s); err != nil {
		t.Fatal(err)
	}
}
