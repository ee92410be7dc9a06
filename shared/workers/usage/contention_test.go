package usage_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"tunnelapi/shared/families/access"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/faults"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/usage"
)

// Usage batches written while the tenant keeps writes in flight, and while other batches of the
// same tenants and day are written at once, are all counted, each exactly once: none is lost to
// a transaction conflict, and a batch delivered again, even at the same time as itself, adds
// nothing. DynamoDB Local queues a transaction behind another rather than cancel it, so the
// usage worker's client meets DynamoDB's own answers injected into a fraction of its attempts:
// TransactionConflict, and an error after the transaction applied (the outcome a retry must not
// count twice). No usage transaction includes an item a tenant's write includes (the account
// item every tenant write checks): in DynamoDB that is what would make them conflict.
// keyOf is the key of the item a transaction's write names.
func keyOf(it types.TransactWriteItem) store.Key {
	var k map[string]types.AttributeValue
	switch {
	case it.Put != nil:
		k = it.Put.Item
	case it.Update != nil:
		k = it.Update.Key
	case it.Delete != nil:
		k = it.Delete.Key
	case it.ConditionCheck != nil:
		k = it.ConditionCheck.Key
	}
	pk, _ := k[store.AttrPK].(*types.AttributeValueMemberS)
	sk, _ := k[store.AttrSK].(*types.AttributeValueMemberS)
	if pk == nil || sk == nil {
		return store.Key{}
	}
	return store.Key{PK: pk.Value, SK: sk.Value}
}

func TestWriteCountsEveryBatchUnderContention(t *testing.T) {
	s := testkit.Start(t, access.IPPoliciesDescriptor)
	ctx := t.Context()
	a, b := s.NewAccount(t), s.NewAccount(t)
	inj := &faults.DynamoDB{}
	inj.SetWrites(0.25, faults.TxConflict, faults.InternalAfter)
	var touchedMu sync.Mutex
	touched := map[store.Key]bool{}
	o := testkit.Config(t, config.LoadUsageWorker).StoreOptions()
	o.Table = s.DB.Table
	o.APIOptions = append(o.APIOptions, inj.Option, func(d *dynamodb.Options) {
		d.APIOptions = append(d.APIOptions, func(st *middleware.Stack) error {
			return st.Initialize.Add(middleware.InitializeMiddlewareFunc("touched", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if tx, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput); ok {
					touchedMu.Lock()
					for _, it := range tx.TransactItems {
						touched[keyOf(it)] = true
					}
					touchedMu.Unlock()
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
		})
	})
	db, err := store.Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	pol := a.Do(t, "POST", "/ip_policies", map[string]any{"description": "busy"}).Expect(t, 201)["id"].(string)

	const (
		tenantWriters  = 4
		tenantWrites   = 25 // each
		usageWriters   = 6
		batchesEach    = 6
		linesPerBatch  = 5
		deliveriesEach = 2 // every batch is delivered twice, concurrently
	)
	day := time.Date(2025, 11, 28, 12, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	refused := make(chan string, tenantWriters*tenantWrites+usageWriters*batchesEach*deliveriesEach)
	for w := range tenantWriters {
		wg.Go(func() {
			for i := range tenantWrites {
				body := map[string]any{"description": fmt.Sprintf("writer %d write %d", w, i)}
				if r := a.Do(t, "PATCH", "/ip_policies/"+pol, body); r.Status != http.StatusOK {
					refused <- fmt.Sprintf("tenant write: %d %s", r.Status, r.Body)
				}
			}
		})
	}
	for w := range usageWriters {
		wg.Go(func() {
			for i := range batchesEach {
				sums := usage.Sums{}
				for range linesPerBatch {
					for _, acct := range []string{a.AccountID, b.AccountID} {
						sums.Add(day, metrics.Usage{Account: acct, Family: "ip_policies", Status: 200, Mutation: 1, ReadUnits: 0.5, WriteUnits: 2})
					}
				}
				batch := fmt.Sprintf("contention-%d-%d", w, i)
				var same sync.WaitGroup
				for range deliveriesEach {
					same.Go(func() {
						if err := usage.Write(ctx, db, batch, sums); err != nil {
							refused <- fmt.Sprintf("usage batch %s: %v", batch, err)
						}
					})
				}
				same.Wait()
			}
		})
	}
	wg.Wait()
	close(refused)
	for r := range refused {
		t.Error(r)
	}
	if inj.Injected()[faults.TxConflict] == 0 || inj.Injected()[faults.InternalAfter] == 0 {
		t.Fatalf("injected %v: the retries were not exercised", inj.Injected())
	}
	for _, acct := range []string{a.AccountID, b.AccountID} {
		if touched[store.AccountKey(acct)] {
			t.Errorf("a usage transaction includes the account item of %s, which every tenant write checks", acct)
		}
		if !touched[store.TenantKey(acct)] {
			t.Errorf("no usage transaction checks the tenant entry of %s", acct)
		}
	}
	const want = usageWriters * batchesEach * linesPerBatch
	for _, acct := range []string{a.AccountID, b.AccountID} {
		days, err := usage.Days(ctx, s.DB, acct, "2025-11-28", "2025-11-28")
		if err != nil || len(days) != 1 {
			t.Fatalf("%s: days %+v, %v; want one", acct, days, err)
		}
		d := days[0]
		if d.Total("2xx") != want || d.Mutations != want || d.ReadUnits != 0.5*want || d.WriteUnits != 2*want {
			t.Errorf("%s: %d requests, %d mutations, %v read and %v write units; want %d, %d, %v, %v",
				acct, d.Total("2xx"), d.Mutations, d.ReadUnits, d.WriteUnits, want, want, 0.5*want, 2.0*want)
		}
	}
}
