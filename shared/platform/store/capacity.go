package store

import (
	"context"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/metrics"
)

// Each call the store makes under a context carrying a metrics.Tally (a request's or a job's)
// adds the capacity it consumed to the tally: reads (GetItem, BatchGetItem, Query) as read
// units, writes as write units. Reads and single-item writes ask DynamoDB for it
// (ReturnConsumedCapacity TOTAL, answered in the same round trip). A transaction counts its
// write units itself, by DynamoDB's rule, from what the process knows for certain of each
// item's size (Tx.units), and asks only when it does not know one: asking makes DynamoDB
// Local's transactions markedly slower (it looks its table up again for every item written).
// A call without a tally asks for nothing. The calls do it themselves, rather than a
// middleware on the client, so a function links no call it never makes.

// capacity is the ReturnConsumedCapacity of a call under ctx.
func capacity(ctx context.Context) types.ReturnConsumedCapacity {
	if metrics.TallyOf(ctx) == nil {
		return ""
	}
	return types.ReturnConsumedCapacityTotal
}

// addRead adds the read units a call under ctx consumed (ccs, as its output reports them) to
// ctx's tally, if any.
func addRead(ctx context.Context, ccs ...types.ConsumedCapacity) {
	if t := metrics.TallyOf(ctx); t != nil {
		t.AddCapacity(units(ccs), 0)
	}
}

// addWrite is addRead for a write's units.
func addWrite(ctx context.Context, ccs ...types.ConsumedCapacity) {
	if t := metrics.TallyOf(ctx); t != nil {
		t.AddCapacity(0, units(ccs))
	}
}

// one is a single-table call's ConsumedCapacity as a list (none when absent).
func one(cc *types.ConsumedCapacity) []types.ConsumedCapacity {
	if cc == nil {
		return nil
	}
	return []types.ConsumedCapacity{*cc}
}

func units(ccs []types.ConsumedCapacity) float64 {
	var sum float64
	for _, cc := range ccs {
		sum += aws.ToFloat64(cc.CapacityUnits)
	}
	return sum
}

// reads is a tally's note of a consistent read: the items found at keys, nil where none.
type reads struct {
	keys  []Key
	items []Item
}

// noteReads notes, in ctx's tally, the items a consistent read found at keys (nil where none):
// Tx.units sizes the writes of items its request read from them. The keys are copied: a caller
// may reuse their array.
func noteReads(ctx context.Context, keys []Key, items []Item) {
	if t := metrics.TallyOf(ctx); t != nil {
		t.Note(reads{slices.Clone(keys), items})
	}
}

// readUnder is the item the latest read under ctx found at k (nil: absent); ok is false when
// none read it.
func readUnder(ctx context.Context, k Key) (it Item, ok bool) {
	t := metrics.TallyOf(ctx)
	if t == nil {
		return nil, false
	}
	notes := t.Notes()
	for i := len(notes) - 1; i >= 0; i-- {
		if r, isRead := notes[i].(reads); isRead {
			for j, have := range r.keys {
				if have == k {
					return r.items[j], true
				}
			}
		}
	}
	return nil, false
}

// kb is DynamoDB's unit of write capacity: one per started KB of an item.
const kb = 1024

// SmallItemBytes bounds the size of every item kept at a token's key (TokenKey) or an
// account's (AccountKey), which every guarded write checks: a token item holds its hash, a
// kind, three ids, a subject (an email of at most 254 bytes or a bot's name of at most 255) and
// a flag; a tunnel server's token its id, name (at most 63 bytes) and region; an account item
// its id, two numbers and a status. The checks and updates of these items, which a create does
// not read first, are counted from this bound (TestSmallItemsAreSmall holds the shapes to it),
// as are those of items a writer declares as small (Tx.Small).
const SmallItemBytes = 640

// small reports whether k is a key whose items are at most SmallItemBytes: a token's, an
// account's, or one declared small (Small).
func (t *Tx) small(k Key) bool {
	return k.SK == "T" && strings.HasPrefix(k.PK, "T#") || k.SK == "ACCOUNT" && strings.HasPrefix(k.PK, "A#") ||
		slices.Contains(t.declared, k)
}

// units counts the write units of t's writes as DynamoDB bills a transaction: each write twice
// the units of the same write alone, one per started KB of the larger of its item's sizes
// before and after (a condition check two, on an item under a KB). It counts only from what
// the process knows for certain:
//   - a Put that creates (Absent its only condition, or PutNew): its item's size;
//   - a Put, Update or Delete of an item read under ctx whose condition pins the version read
//     (AtVersion): that read's size and, for an Update, what its expression can add;
//   - a check, update or delete of a token's or an account's item, or of one declared small
//     (Small): SmallItemBytes.
//
// Sizes are bounds (DynamoDB gives numbers' sizes approximately); ok is false, and the
// transaction asks DynamoDB, when some write's item is none of these or its bounds straddle a
// KB.
func (t *Tx) units(ctx context.Context) (_ []float64, ok bool) {
	out := make([]float64, len(t.items))
	for i, w := range t.items {
		k := t.keys[i]
		var lo, hi int // bounds of the larger of the item's sizes before and after
		switch {
		case w.Put != nil:
			lo, hi = itemBounds(w.Put.Item)
			if createsItem(w.Put) || t.isFresh(i) {
				break
			}
			old, pinned := pinnedRead(ctx, k, w.Put.ConditionExpression, w.Put.ExpressionAttributeNames, w.Put.ExpressionAttributeValues)
			if !pinned {
				return nil, false
			}
			olo, ohi := itemBounds(old)
			lo, hi = max(lo, olo), max(hi, ohi)
		case w.Update != nil:
			g, known := growth(w.Update)
			if !known {
				return nil, false
			}
			if t.small(k) {
				lo, hi = 1, SmallItemBytes+g
				break
			}
			old, pinned := pinnedRead(ctx, k, w.Update.ConditionExpression, w.Update.ExpressionAttributeNames, w.Update.ExpressionAttributeValues)
			if !pinned {
				return nil, false
			}
			olo, ohi := itemBounds(old)
			lo, hi = olo, ohi+g
		case w.Delete != nil:
			if t.small(k) {
				lo, hi = 1, SmallItemBytes
				break
			}
			old, pinned := pinnedRead(ctx, k, w.Delete.ConditionExpression, w.Delete.ExpressionAttributeNames, w.Delete.ExpressionAttributeValues)
			if !pinned {
				return nil, false
			}
			lo, hi = itemBounds(old)
		case w.ConditionCheck != nil:
			// Two units for an item under a KB; DynamoDB documents no rule for a larger one.
			if !t.small(k) {
				return nil, false
			}
			lo, hi = 1, SmallItemBytes
		default:
			return nil, false
		}
		blocks := max(1, (lo+kb-1)/kb)
		if max(1, (hi+kb-1)/kb) != blocks {
			return nil, false
		}
		out[i] = float64(2 * blocks)
	}
	return out, true
}

// pinnedRead is the item read under ctx at k when a write's condition (cond, with its names
// and values) requires the version that read found (AtVersion): the write then commits only
// over exactly that item. ok is false otherwise.
func pinnedRead(ctx context.Context, k Key, cond *string, names map[string]string, values map[string]types.AttributeValue) (_ Item, ok bool) {
	if cond == nil {
		return nil, false
	}
	old, read := readUnder(ctx, k)
	if !read || old == nil {
		return nil, false
	}
	v, isN := old[AttrVersion].(*types.AttributeValueMemberN)
	if !isN {
		return nil, false
	}
	for ph, name := range names {
		if name != AttrVersion {
			continue
		}
		// The expression builder writes an equality as "#n = :v".
		rest := *cond
		for {
			i := strings.Index(rest, ph+" = :")
			if i < 0 {
				break
			}
			rest = rest[i+len(ph)+3:]
			end := strings.IndexAny(rest, " )")
			if end < 0 {
				end = len(rest)
			}
			if want, isN := values[rest[:end]].(*types.AttributeValueMemberN); isN && want.Value == v.Value {
				return old, true
			}
		}
	}
	return nil, false
}

// itemBounds bounds the size DynamoDB accounts it at: attribute names and values, strings and
// binaries their bytes, numbers about a byte per two significant digits and one more, lists
// and maps up to 3 bytes and one per element besides their elements.
func itemBounds(it Item) (lo, hi int) {
	for name, v := range it {
		l, h := valueBounds(v)
		lo, hi = lo+len(name)+l, hi+len(name)+h
	}
	return lo, hi
}

func valueBounds(v types.AttributeValue) (lo, hi int) {
	switch v := v.(type) {
	case *types.AttributeValueMemberN:
		return numberBounds(v.Value)
	case *types.AttributeValueMemberNS:
		for _, n := range v.Value {
			l, h := numberBounds(n)
			lo, hi = lo+l, hi+h
		}
		return lo, hi
	case *types.AttributeValueMemberL:
		hi = 3
		for _, e := range v.Value {
			l, h := valueBounds(e)
			lo, hi = lo+l, hi+1+h
		}
		return lo, hi
	case *types.AttributeValueMemberM:
		hi = 3
		for k, e := range v.Value {
			l, h := valueBounds(e)
			lo, hi = lo+len(k)+l, hi+1+len(k)+h
		}
		return lo, hi
	}
	n := valueSize(v) // strings, binaries, their sets, booleans and nulls: exact
	return n, n
}

// numberBounds bounds a number's size: its significant digits, two to a byte, and a byte.
func numberBounds(s string) (lo, hi int) {
	digits := s
	if i := strings.IndexAny(digits, "eE"); i >= 0 {
		digits = digits[:i]
	}
	n := 0
	for _, c := range strings.Trim(strings.TrimLeft(digits, "+-"), "0.") {
		if c >= '0' && c <= '9' {
			n++
		}
	}
	return (n + 1) / 2, (len(s)+1)/2 + 2
}

// maxNumberBytes is the most a number can take: 38 significant digits, two to a byte, and one.
const maxNumberBytes = 20

// growth bounds how many bytes update u can add to its item: the names and values it holds,
// and for each value a number's greatest size (an addition's result). known is false when a
// SET copies an attribute or appends to a list, which can add as much as the item holds.
func growth(u *types.Update) (n int, known bool) {
	if !simpleSets(aws.ToString(u.UpdateExpression)) {
		return 0, false
	}
	for _, name := range u.ExpressionAttributeNames {
		n += len(name)
	}
	for _, v := range u.ExpressionAttributeValues {
		_, h := valueBounds(v)
		n += h + maxNumberBytes
	}
	return n, true
}

// simpleSets reports whether every SET action of expr (whose names and values are
// placeholders, as the expression builder writes them) sets a value, adds to or subtracts from
// a number, or sets a value if the attribute is absent: none copies an attribute's value.
func simpleSets(expr string) bool {
	i := strings.Index(expr, "SET ")
	if i < 0 {
		return true
	}
	body := expr[i+len("SET "):]
	for _, clause := range []string{"\nADD ", "\nREMOVE ", "\nDELETE "} {
		if j := strings.Index(body, clause); j >= 0 {
			body = body[:j]
		}
	}
	for _, action := range splitTop(body) {
		_, v, _ := strings.Cut(action, "=")
		v = strings.TrimSpace(v)
		switch {
		case !strings.Contains(v, "#"): // a value
		case strings.HasPrefix(v, "if_not_exists("): // its attribute's own value, or a value
		case arithmetic(v): // a number's
		default:
			return false
		}
	}
	return true
}

// arithmetic reports whether v is "#a + :b", "#a - :b", ":b + #a" or ":b - #a".
func arithmetic(v string) bool {
	f := strings.Fields(v)
	return len(f) == 3 && (f[1] == "+" || f[1] == "-") &&
		(strings.HasPrefix(f[0], "#") && strings.HasPrefix(f[2], ":") || strings.HasPrefix(f[0], ":") && strings.HasPrefix(f[2], "#"))
}

// splitTop splits s at the commas outside parentheses.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for j, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:j])
				start = j + 1
			}
		}
	}
	return append(out, s[start:])
}

// sum is the sum of units.
func sum(units []float64) float64 {
	var n float64
	for _, u := range units {
		n += u
	}
	return n
}
