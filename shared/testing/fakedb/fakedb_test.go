package fakedb_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/testing/fakedb"
)

type row struct {
	PK      string   `dynamodbav:"pk"`
	SK      string   `dynamodbav:"sk"`
	V       int64    `dynamodbav:"v"`
	Name    string   `dynamodbav:"name"`
	Tags    []string `dynamodbav:"tags,stringset,omitempty"`
	Missing string   `dynamodbav:"missing,omitempty"`
}

var key = map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "P"}, "sk": &types.AttributeValueMemberS{Value: "S"}}

// TestConditions: the fake decides the conditions the expression builder produces as DynamoDB
// does, so tests built on it fail where the real table would.
func TestConditions(t *testing.T) {
	n := expression.Name
	v := expression.Value
	tests := []struct {
		name string
		cond expression.ConditionBuilder
		want bool
	}{
		{"exists", expression.AttributeExists(n("pk")), true},
		{"not exists", expression.AttributeNotExists(n("pk")), false},
		{"absent attribute", expression.AttributeNotExists(n("missing")), true},
		{"equal number", n("v").Equal(v(3)), true},
		{"unequal number", n("v").Equal(v(4)), false},
		{"not equal", n("v").NotEqual(v(4)), true},
		{"less", n("v").LessThan(v(10)), true},
		{"less equal", n("v").LessThanEqual(v(3)), true},
		{"greater", n("v").GreaterThan(v(3)), false},
		{"string order", n("sk").LessThan(v("T")), true},
		{"contains in set", expression.Contains(n("tags"), "a"), true},
		{"not contains in set", expression.Not(expression.Contains(n("tags"), "z")), true},
		{"contains in string", expression.Contains(n("name"), "idg"), true},
		{"begins with", expression.BeginsWith(n("name"), "wid"), true},
		{"size", n("tags").Size().Equal(v(2)), true},
		{"and", expression.AttributeExists(n("pk")).And(n("v").Equal(v(3)), n("name").Equal(v("widget"))), true},
		{"and false", expression.AttributeExists(n("pk")).And(n("v").Equal(v(2))), false},
		{"or", expression.Or(n("v").Equal(v(2)), expression.AttributeNotExists(n("refs"))), true},
		{"between", n("v").Between(v(1), v(3)), true},
		{"in", n("name").In(v("x"), v("widget")), true},
		{"absent compares false", n("missing").LessThan(v("a")), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := fakedb.New()
			if err := db.Seed(row{PK: "P", SK: "S", V: 3, Name: "widget", Tags: []string{"a", "b"}}); err != nil {
				t.Fatal(err)
			}
			e, err := expression.NewBuilder().WithCondition(tc.cond).Build()
			if err != nil {
				t.Fatal(err)
			}
			_, err = db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{Key: key, ConditionExpression: e.Condition(),
				ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values()})
			var ccf *types.ConditionalCheckFailedException
			if got := err == nil; got != tc.want || (err != nil && !errors.As(err, &ccf)) {
				t.Errorf("condition %s: held=%v (%v), want %v", aws.ToString(e.Condition()), got, err, tc.want)
			}
		})
	}
}

func TestUpdate(t *testing.T) {
	db := fakedb.New()
	db.Seed(row{PK: "P", SK: "S", V: 3, Name: "widget", Tags: []string{"a", "b"}})
	upd := expression.Set(expression.Name("name"), expression.Value("gadget")).
		Add(expression.Name("v"), expression.Value(2)).
		Add(expression.Name("refs"), expression.Value(-1)).
		Delete(expression.Name("tags"), expression.Value(&types.AttributeValueMemberSS{Value: []string{"a"}}))
	e, err := expression.NewBuilder().WithUpdate(upd).Build()
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{Key: key, UpdateExpression: e.Update(), ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values()}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		row
		Refs int64 `dynamodbav:"refs"`
	}
	if err := attributevalue.UnmarshalMap(db.Item("P", "S"), &got); err != nil {
		t.Fatal(err)
	}
	if got.Name != "gadget" || got.V != 5 || got.Refs != -1 || len(got.Tags) != 1 || got.Tags[0] != "b" {
		t.Errorf("after update: %+v", got)
	}
}

// TestTransactionAllOrNothing: one failed condition cancels every write, with a reason per item.
func TestTransactionAllOrNothing(t *testing.T) {
	db := fakedb.New()
	ctx := context.Background()
	put := func(sk string) types.TransactWriteItem {
		return types.TransactWriteItem{Put: &types.Put{Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "P"}, "sk": &types.AttributeValueMemberS{Value: sk}},
			ConditionExpression: aws.String("attribute_not_exists(pk)")}}
	}
	if _, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{put("a")}}); err != nil {
		t.Fatal(err)
	}
	_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{put("b"), put("a")}})
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) != 2 ||
		aws.ToString(tce.CancellationReasons[0].Code) != fakedb.ReasonNone || aws.ToString(tce.CancellationReasons[1].Code) != fakedb.ReasonConditionalCheck {
		t.Fatalf("err = %v", err)
	}
	if db.Item("P", "b") != nil {
		t.Error("a cancelled transaction wrote")
	}
	// Scripted failures come first, once each, in order.
	db.Fail(fakedb.OpTransactWriteItems, fakedb.Throttled(), nil)
	var thr *types.ProvisionedThroughputExceededException
	if _, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{put("c")}}); !errors.As(err, &thr) {
		t.Errorf("scripted throttle: %v", err)
	}
	if _, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{put("c")}}); err != nil {
		t.Errorf("after the script: %v", err)
	}
	if db.Count(fakedb.OpTransactWriteItems) != 4 {
		t.Errorf("Count = %d", db.Count(fakedb.OpTransactWriteItems))
	}
}
