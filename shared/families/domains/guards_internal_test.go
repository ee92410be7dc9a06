package domains

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"tunnelapi/shared/platform/store"
)

// TestGuardsAreSmall: the guards Known declares small (store.Tx.Small), a name's and an
// address's, at the longest name (253 bytes) and address (that name and a five-digit port), with
// ids far longer than any, are within store.SmallItemBytes.
func TestGuardsAreSmall(t *testing.T) {
	name := strings.Repeat("n", maxNameBytes)
	id := strings.Repeat("i", 64)
	for what, k := range map[string]store.Key{"name": nameGuardKey(name), "address": addrGuardKey(name + ":65535")} {
		av, err := attributevalue.MarshalMap(guard{Key: k, AccountID: id, ID: id})
		if err != nil {
			t.Fatal(err)
		}
		if n := store.ItemSize(av); n > store.SmallItemBytes {
			t.Errorf("the largest %s guard takes %d bytes, more than store.SmallItemBytes (%d)", what, n, store.SmallItemBytes)
		}
	}
}
