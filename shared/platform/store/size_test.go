package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/fakedb"
	"tunnelapi/shared/testing/testkit"
)

// sized returns an item of exactly size bytes by ItemSize, of one of several shapes (a long
// string beside numbers, lists, maps and sets).
func sized(shape string, size int) store.Item {
	it := store.Item{"pk": &types.AttributeValueMemberS{Value: "P#" + shape}, "sk": &types.AttributeValueMemberS{Value: fmt.Sprint(size)},
		"v": &types.AttributeValueMemberN{Value: "12345"}}
	switch shape {
	case "list and map":
		var l []types.AttributeValue
		for range 1000 {
			l = append(l, &types.AttributeValueMemberS{Value: strings.Repeat("a", 300)})
		}
		it["l"] = &types.AttributeValueMemberL{Value: l}
		it["m"] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"abc": &types.AttributeValueMemberS{Value: "x"}, "n": &types.AttributeValueMemberN{Value: "1"},
			"b": &types.AttributeValueMemberBOOL{Value: true}, "z": &types.AttributeValueMemberNULL{Value: true}}}
	case "sets":
		it["ss"] = &types.AttributeValueMemberSS{Value: []string{"one", "three"}}
		it["bin"] = &types.AttributeValueMemberB{Value: make([]byte, 1000)}
	}
	it["x"] = &types.AttributeValueMemberS{}
	it["x"] = &types.AttributeValueMemberS{Value: strings.Repeat("z", size-store.ItemSize(it))}
	return it
}

// TestItemSizeMatchesDynamoDB: DynamoDB Local accepts an item of exactly MaxItemBytes by
// ItemSize and refuses one byte more, whatever the item's shape.
func TestItemSizeMatchesDynamoDB(t *testing.T) {
	ctx := context.Background()
	testkit.Endpoint(t)
	o := testkit.Config(t, config.LoadHTTP).StoreOptions()
	o.Table = fmt.Sprintf("size-%d", time.Now().UnixNano())
	db, err := store.Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(db.Table)}) })
	for _, shape := range []string{"string", "list and map", "sets"} {
		for _, size := range []int{store.MaxItemBytes, store.MaxItemBytes + 1} {
			it := sized(shape, size)
			if got := store.ItemSize(it); got != size {
				t.Fatalf("%s: built %d bytes, want %d", shape, got, size)
			}
			_, err := db.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(db.Table), Item: it})
			if fits := size <= store.MaxItemBytes; (err == nil) != fits {
				t.Errorf("%s of %d bytes: DynamoDB Local says %v", shape, size, err)
			}
		}
	}
}

// TestCommitRefusesOversizedItems: a transaction putting an item over the limit is refused
// before it is sent, naming the write and the item's largest attribute.
func TestCommitRefusesOversizedItems(t *testing.T) {
	f := fakedb.New()
	db := store.New(f, "t")
	small := newThing("acct", 1)
	big := newThing("acct", 2)
	big.Name = strings.Repeat("n", store.MaxItemBytes)
	tx := &store.Tx{}
	tx.Put("small", small)
	tx.Put("big", big)
	err := db.Commit(context.Background(), tx)
	var tl *store.TooLargeError
	if !errors.As(err, &tl) || tl.Label != "big" || tl.Attribute != "name" || tl.Bytes <= store.MaxItemBytes || tl.Limit != store.MaxItemBytes {
		t.Fatalf("err = %v", err)
	}
	if n := f.Count(fakedb.OpTransactWriteItems); n != 0 {
		t.Fatalf("%d transactions sent", n)
	}

	// Items that fit one by one may still exceed the transaction's limit together.
	tx = &store.Tx{}
	for i := range 12 {
		it := newThing("acct", 10+i)
		it.Name = strings.Repeat("n", store.MaxItemBytes-1000)
		tx.Put(fmt.Sprint("w", i), it)
	}
	if err := db.Commit(context.Background(), tx); !errors.As(err, &tl) || tl.Label != "" || tl.Limit != store.MaxTxBytes {
		t.Fatalf("err = %v", err)
	}
}
