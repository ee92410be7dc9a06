package store

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxItemBytes is DynamoDB's limit on one item: its attribute names and values together.
const MaxItemBytes = 400 << 10

// MaxTxBytes is DynamoDB's limit on the items of one transaction together.
const MaxTxBytes = 4 << 20

// ItemSize is the size DynamoDB accounts an item at: every attribute name's bytes plus its
// value's (strings and binaries their bytes, numbers about one byte per two digits plus one,
// booleans and nulls one byte, lists and maps 3 bytes plus one per element and their
// elements' sizes, map keys included).
func ItemSize(it Item) int {
	n := 0
	for name, v := range it {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		return sumOf(v.Value, func(s string) int { return len(s) })
	case *types.AttributeValueMemberNS:
		return sumOf(v.Value, numberSize)
	case *types.AttributeValueMemberBS:
		return sumOf(v.Value, func(b []byte) int { return len(b) })
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	}
	return 0
}

// sumOf is the sum of size over the members of a set.
func sumOf[E any](set []E, size func(E) int) int {
	n := 0
	for _, e := range set {
		n += size(e)
	}
	return n
}

// numberSize over-approximates a number's size (DynamoDB stores up to 38 significant digits,
// about two per byte, plus a byte).
func numberSize(s string) int { return (len(s)+1)/2 + 1 }

// largestAttribute names the attribute of it that takes the most bytes.
func largestAttribute(it Item) string {
	best, size := "", -1
	for name, v := range it {
		if n := len(name) + valueSize(v); n > size {
			best, size = name, n
		}
	}
	return best
}

// TooLargeError reports a transaction refused before it was sent because an item it writes
// would exceed MaxItemBytes (or all of them MaxTxBytes, then Label is empty). Nothing was
// written. Callers turn it into a 400 naming the input that made the item large.
type TooLargeError struct {
	// Label is the write whose item is too large; Attribute its largest attribute.
	Label, Attribute string
	Bytes, Limit     int
}

// Error implements error.
func (e *TooLargeError) Error() string {
	if e.Label == "" {
		return fmt.Sprintf("store: the transaction's items take %d bytes, more than DynamoDB's %d", e.Bytes, e.Limit)
	}
	return fmt.Sprintf("store: item %s takes %d bytes (largest attribute %q), more than DynamoDB's %d", e.Label, e.Bytes, e.Attribute, e.Limit)
}

// checkSizes refuses a transaction DynamoDB would refuse for the size of what it puts: the
// items of Put writes are measured as they are sent (updates change only small counters).
func (t *Tx) checkSizes() error {
	total := 0
	for i, it := range t.items {
		if it.Put == nil {
			continue
		}
		n := ItemSize(it.Put.Item)
		if n > MaxItemBytes {
			return &TooLargeError{Label: t.labels[i], Attribute: largestAttribute(it.Put.Item), Bytes: n, Limit: MaxItemBytes}
		}
		total += n
	}
	if total > MaxTxBytes {
		return &TooLargeError{Bytes: total, Limit: MaxTxBytes}
	}
	return nil
}
