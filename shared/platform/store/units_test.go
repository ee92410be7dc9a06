package store_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"tunnelapi/shared/families/tunnels"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/store"
)

// The items kept at a token's and an account's key, each attribute at the longest its writers
// allow (ids far longer than any, a subject of 255 bytes: an email is at most 254, a bot's name
// at most 255; a tunnel server's name at most 63 and a region one of a short list), are within
// store.SmallItemBytes, from which the store counts their checks and updates.
func TestSmallItemsAreSmall(t *testing.T) {
	id := strings.Repeat("i", 64)
	num := int64(1) << 62
	hash := strings.Repeat("f", 64)
	for name, it := range map[string]any{
		"api key token": auth.TokenItem{Key: store.TokenKey(hash), Kind: auth.KindCredential, AccountID: id,
			PrincipalID: id, Subject: strings.Repeat("s", 255), Admin: true, ResourceID: id},
		"tunnel server token": tunnels.ServerTokenItem{Key: store.TokenKey(hash), Kind: tunnels.KindTunnelServer, ID: id,
			Name: strings.Repeat("n", 63), Region: strings.Repeat("r", 64)},
		"account": auth.AccountItem{Key: store.AccountKey(id), ID: id, Restriction: num, Created: num, Status: auth.StatusSuspended},
	} {
		av, err := attributevalue.MarshalMap(it)
		if err != nil {
			t.Fatal(err)
		}
		if n := store.ItemSize(av); n > store.SmallItemBytes {
			t.Errorf("the largest %s item takes %d bytes, more than store.SmallItemBytes (%d)", name, n, store.SmallItemBytes)
		}
	}
}
