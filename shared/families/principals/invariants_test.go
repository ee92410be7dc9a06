package principals_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

// The invariant check run after the suite must catch what it claims to: a token hash whose key
// is gone, an event missing for a committed mutation, and a secret stored in plaintext.
func TestInvariantCheckCatchesCorruption(t *testing.T) {
	s := testkit.Start(t, app.Families...)
	a := s.NewAccount(t)
	ctx := t.Context()
	k := a.Do(t, "POST", "/api_keys", map[string]any{}).Expect(t, http.StatusCreated)
	if err := s.CheckInvariants(ctx); err != nil {
		t.Fatalf("clean table reported: %v", err)
	}
	key := store.ResourceKey(a.AccountID, k["id"].(string))
	var item struct {
		TokenHash string `dynamodbav:"token_hash"`
	}
	if err := s.DB.Get(ctx, key, &item); err != nil {
		t.Fatal(err)
	}
	put := func(av map[string]types.AttributeValue) {
		if _, err := s.DB.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.DB.Table), Item: av}); err != nil {
			t.Fatal(err)
		}
	}
	// A plaintext copy of the token.
	av := store.Key{PK: "X#leak", SK: "X"}.AV()
	av["note"] = &types.AttributeValueMemberS{Value: k["token"].(string)}
	put(av)
	if err := s.CheckInvariants(ctx); err == nil || !strings.Contains(err.Error(), "plaintext") {
		t.Fatalf("plaintext token not caught: %v", err)
	}
	s.DB.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.DB.Table), Key: store.Key{PK: "X#leak", SK: "X"}.AV()})
	// The key deleted behind the API's back: its token hash is orphaned and its event count is off.
	if _, err := s.DB.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.DB.Table), Key: key.AV()}); err != nil {
		t.Fatal(err)
	}
	err := s.CheckInvariants(ctx)
	if err == nil || !strings.Contains(err.Error(), "without its resource") {
		t.Fatalf("orphaned token hash not caught: %v", err)
	}
	// An audit event too many.
	put(store.EventLogKey(a.AccountID, "ev_extra").AV())
	if err := s.CheckInvariants(ctx); err == nil || !strings.Contains(err.Error(), "audit events for") {
		t.Fatalf("extra audit event not caught: %v", err)
	}
}
