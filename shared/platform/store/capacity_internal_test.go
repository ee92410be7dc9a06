package store

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/metrics"
)

// Which writes units counts without asking, and what: a create from its item, a write of an
// item read under the request only when its condition pins the version read, a check or an
// update of a token's or an account's item, or of one declared small, from their bound;
// anything else asks.
func TestUnitsCountOnlyWhatIsKnown(t *testing.T) {
	res := Key{PK: "A#acct#ipp", SK: "ipp_1"}
	big := Item{AttrPK: &types.AttributeValueMemberS{Value: res.PK}, AttrSK: &types.AttributeValueMemberS{Value: res.SK},
		AttrVersion: &types.AttributeValueMemberN{Value: "7"}, "d": &types.AttributeValueMemberS{Value: string(make([]byte, 1500))}}
	read := func() context.Context {
		ctx := metrics.WithTally(context.Background(), &metrics.Tally{})
		noteReads(ctx, []Key{res}, []Item{big})
		return ctx
	}
	bump := expression.Set(expression.Name("d"), expression.Value("x"))
	for _, c := range []struct {
		name  string
		ctx   context.Context
		build func(tx *Tx)
		want  []float64 // nil: asks
	}{
		{"create", context.Background(), func(tx *Tx) { tx.Put("it", Key{PK: "A#acct#ipp", SK: "ipp_2"}, Absent()) }, []float64{2}},
		{"replace the version read", read(), func(tx *Tx) { tx.Put("it", res, AtVersion(7)) }, []float64{4}},
		{"replace another version", read(), func(tx *Tx) { tx.Put("it", res, AtVersion(6)) }, nil},
		{"replace unread", context.Background(), func(tx *Tx) { tx.Put("it", res, AtVersion(7)) }, nil},
		{"update the version read", read(), func(tx *Tx) { tx.Update("it", res, bump, AtVersion(7)) }, []float64{4}},
		{"update without a version", read(), func(tx *Tx) { tx.Update("it", res, bump, Exists()) }, nil},
		{"delete the version read", read(), func(tx *Tx) { tx.Delete("it", res, AtVersion(7), Unreferenced()) }, []float64{4}},
		{"check a token and an account", context.Background(), func(tx *Tx) {
			tx.Check("token", TokenKey("abc"), Exists())
			tx.Check("account", AccountKey("acct"), Exists())
		}, []float64{2, 2}},
		{"count on an account", context.Background(), func(tx *Tx) {
			tx.Update("account", AccountKey("acct"), expression.Add(expression.Name("n"), expression.Value(1)), Exists())
		}, []float64{2}},
		{"copy on an account", context.Background(), func(tx *Tx) {
			tx.Update("account", AccountKey("acct"), expression.Set(expression.Name("a"), expression.Name("b")), Exists())
		}, nil},
		{"check a resource", read(), func(tx *Tx) { tx.Check("it", res, Exists()) }, nil},
		{"check and count on guards declared small", context.Background(), func(tx *Tx) {
			tx.Small(GuardKey("g", "1"))
			tx.Check("g1", GuardKey("g", "1"), Exists())
			tx.Update("g2", GuardKey("g", "2"), expression.Add(expression.Name("n"), expression.Value(1)))
			tx.Small(GuardKey("g", "2"))
		}, []float64{2, 2}},
		{"check a guard not declared small", context.Background(), func(tx *Tx) {
			tx.Small(GuardKey("g", "1"))
			tx.Check("g2", GuardKey("g", "2"), Exists())
		}, nil},
	} {
		tx := &Tx{}
		c.build(tx)
		if tx.err != nil {
			t.Fatalf("%s: %v", c.name, tx.err)
		}
		got, ok := tx.units(c.ctx)
		if ok != (c.want != nil) || len(got) != len(c.want) {
			t.Errorf("%s: units %v (counted %v), want %v", c.name, got, ok, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: units %v, want %v", c.name, got, c.want)
			}
		}
	}
}

// A number's bounds hold DynamoDB's approximate size (a byte per two significant digits, and
// one) between them, and a size whose bounds straddle a KB makes the write ask.
func TestNumberBounds(t *testing.T) {
	for s, size := range map[string]int{"7": 2, "100": 2, "12345": 4, "-0.05": 2, "1.5e10": 2, "123456789012": 7} {
		lo, hi := numberBounds(s)
		if lo > size || hi < size {
			t.Errorf("numberBounds(%q) = %d, %d: %d is outside", s, lo, hi, size)
		}
	}
	// 17 bytes of names and keys, the string and the number: at least 1,023 bytes, at most 1,025.
	k := Key{PK: "A#acct#x", SK: "x_1"}
	tx := &Tx{}
	tx.Put("it", struct {
		Key
		D string `dynamodbav:"d"`
		N int    `dynamodbav:"n"`
	}{k, string(make([]byte, 1024-17-4)), 123456}, Absent())
	if got, ok := tx.units(context.Background()); ok {
		t.Errorf("a create whose size is within a number's uncertainty of a KB counted %v", got)
	}
}
