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

// DynamoDB Local reports consumed capacity by DynamoDB's documented rule, which the cost table
// relies on: a write costs one unit per started KB of the item (attribute names and values), a
// transactional write twice that.
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
