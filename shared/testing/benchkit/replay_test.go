package benchkit

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A replay is the captured call as DynamoDB received it: its keys rewritten onto the twin, its
// ask for consumed capacity kept.
func TestReplayKeepsTheCall(t *testing.T) {
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "A#1"}, "sk": &types.AttributeValueMemberS{Value: "k_old"}}
	tx := ReplayTransact(&dynamodb.TransactWriteItemsInput{
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
		TransactItems:          []types.TransactWriteItem{{Delete: &types.Delete{TableName: aws.String("t"), Key: key}}},
	}, map[string]string{"k_old": "k_twin"}, "#1")
	if tx.ReturnConsumedCapacity != types.ReturnConsumedCapacityTotal {
		t.Errorf("transaction replay asks for capacity %q, want TOTAL", tx.ReturnConsumedCapacity)
	}
	if got := tx.TransactItems[0].Delete.Key["sk"].(*types.AttributeValueMemberS).Value; got != "k_twin" {
		t.Errorf("transaction replay deletes %q, want k_twin", got)
	}
	get := ReplayBatchGet(&dynamodb.BatchGetItemInput{
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
		RequestItems:           map[string]types.KeysAndAttributes{"t": {Keys: []map[string]types.AttributeValue{key}}},
	}, map[string]string{"k_old": "k_twin"})
	if get.ReturnConsumedCapacity != types.ReturnConsumedCapacityTotal {
		t.Errorf("batch read replay asks for capacity %q, want TOTAL", get.ReturnConsumedCapacity)
	}
	if got := get.RequestItems["t"].Keys[0]["sk"].(*types.AttributeValueMemberS).Value; got != "k_twin" {
		t.Errorf("batch read replay reads %q, want k_twin", got)
	}
}
