package cost_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/app"
	"tunnelapi/shared/testing/testkit"
)

// DynamoDB Local reports consumed capacity by DynamoDB's documented rule for a single write,
// which the cost table relies on: a write costs one unit per started KB of the item (attribute
// names and values), a transactional write twice that. (A transaction of several writes it
// reports otherwise: the meter counts those itself, TestMeterCountsTransactionsByTheRule.)
func TestLocalCapacityOfTransactions(t *testing.T) {
	s := testkit.Start(t, app.Families...)
	item := func(sk string, size int) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "COST#rule"},
			"sk": &types.AttributeValueMemberS{Value: sk}, "v": &types.AttributeValueMemberS{Value: strings.Repeat("x", size)}}
	}
	for _, size := range []int{100, 1500, 3000} {
		put, err := s.DB.Client.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(s.DB.Table), Item: item("a", size),
			ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		if err != nil {
			t.Fatal(err)
		}
		tx, err := s.DB.Client.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{
			TransactItems:          []types.TransactWriteItem{{Put: &types.Put{TableName: aws.String(s.DB.Table), Item: item("b", size)}}},
			ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		if err != nil {
			t.Fatal(err)
		}
		want := float64((size + len("pk") + len("COST#rule") + len("sk") + len("a") + len("v") + 1023) / 1024)
		if got := *put.ConsumedCapacity.CapacityUnits; got != want {
			t.Errorf("a %d-byte value: PutItem consumed %v units, want %v", size, got, want)
		}
		if got := *tx.ConsumedCapacity[0].CapacityUnits; got != 2*want {
			t.Errorf("a %d-byte value: TransactWriteItems consumed %v units, want %v", size, got, 2*want)
		}
	}
}

// The meter counts a transaction of several items by DynamoDB's rule: two units per started KB
// of each item put, updated, deleted or checked, at the larger of its size before and after.
func TestMeterCountsTransactionsByTheRule(t *testing.T) {
	s := testkit.Start(t, app.Families...)
	m := &meter{Client: s.DB.Client}
	table := aws.String(s.DB.Table)
	key := func(sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "COST#meter"}, "sk": &types.AttributeValueMemberS{Value: sk}}
	}
	// item is the item sk whose whole size is size bytes (its key and the name "v" included).
	item := func(sk string, size int) map[string]types.AttributeValue {
		it := key(sk)
		it["v"] = &types.AttributeValueMemberS{Value: strings.Repeat("x", size-len("pkCOST#meterskv")-len(sk))}
		return it
	}
	put := func(sk string, size int) types.TransactWriteItem {
		return types.TransactWriteItem{Put: &types.Put{TableName: table, Item: item(sk, size)}}
	}
	for _, c := range []struct {
		what  string
		items []types.TransactWriteItem
		want  float64
	}{
		{"two Puts of 100 bytes", []types.TransactWriteItem{put("a", 100), put("b", 100)}, 4},
		{"a Put of 1,500 bytes and a check of a 100-byte item", []types.TransactWriteItem{put("c", 1500),
			{ConditionCheck: &types.ConditionCheck{TableName: table, Key: key("a"), ConditionExpression: aws.String("attribute_exists(pk)")}}}, 6},
		{"a 100-byte item replaced by 3,000 bytes, and a Put of 1,024", []types.TransactWriteItem{put("a", 3000), put("d", 1024)}, 8},
		{"an update shrinking 3,000 bytes to 100 and a delete of 1,500", []types.TransactWriteItem{
			{Update: &types.Update{TableName: table, Key: key("a"), UpdateExpression: aws.String("SET v = :v"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberS{Value: "x"}}}},
			{Delete: &types.Delete{TableName: table, Key: key("c")}}}, 10},
		{"a delete of an absent item", []types.TransactWriteItem{{Delete: &types.Delete{TableName: table, Key: key("absent")}}}, 2},
	} {
		if _, err := m.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: c.items}); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if _, write, calls := m.take(); write != c.want || calls != 1 {
			t.Errorf("%s: %v write units in %d calls, want %v in 1", c.what, write, calls, c.want)
		}
	}
}
