package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/metrics"
)

// MaxTxItems is DynamoDB's limit on the items of one transaction.
const MaxTxItems = 100

// Tx collects the writes of one mutation; Commit applies all of them or none. Each write has
// a label so that a cancelled transaction can say which condition failed.
type Tx struct {
	items   []types.TransactWriteItem
	labels  []string
	keys    []Key
	refusal map[string]func(old Item) error
	// wantOld are the labels whose failed writes return the item (RefuseWith).
	wantOld map[string]bool
	// stored counts the resources the transaction creates less those it deletes.
	stored int
	// fresh are the positions of the PutNew writes.
	fresh []int
	// declared are the keys declared small (Small).
	declared []Key
	err      error
}

// Refuse makes Commit return err when the condition of the write labelled label does not hold,
// instead of a *CanceledError, unless a write that is not refused failed too. Families use it
// to turn a failed reference check into a 4xx.
func (t *Tx) Refuse(label string, err error) {
	t.setRefusal(label, func(Item) error { return err })
}

// RefuseWith is Refuse for a write whose condition can fail for several reasons: when it does
// not hold, DynamoDB returns the item as it was then (ReturnValuesOnConditionCheckFailure
// ALL_OLD; nil when it was absent) and Commit returns what explain makes of it. explain
// returning nil means the item explains no refusal (it changed again meanwhile): Commit then
// returns the *CanceledError, as for a write without a refusal. This is how a create validates
// in its one transaction what it would otherwise read first (the item exists, has room, does
// not hold the value yet) and still answers with the exact error of the check that failed. It
// may be called before or after the write is added.
func (t *Tx) RefuseWith(label string, explain func(old Item) error) {
	t.setRefusal(label, explain)
	t.KeepOld(label)
}

// KeepOld asks DynamoDB to return the item of the write labelled label as it was when the
// write's condition failed (ReturnValuesOnConditionCheckFailure ALL_OLD): a *CanceledError
// holds it in Old. It may be called before or after the write is added.
func (t *Tx) KeepOld(label string) {
	if t.wantOld == nil {
		t.wantOld = make(map[string]bool)
	}
	t.wantOld[label] = true
	for i, l := range t.labels {
		if l == label {
			returnOld(&t.items[i])
		}
	}
}

func (t *Tx) setRefusal(label string, explain func(Item) error) {
	if t.refusal == nil {
		t.refusal = make(map[string]func(Item) error)
	}
	t.refusal[label] = explain
}

// returnOld asks DynamoDB for the item as it was when the write's condition failed.
func returnOld(it *types.TransactWriteItem) {
	const all = types.ReturnValuesOnConditionCheckFailureAllOld
	switch {
	case it.Put != nil:
		it.Put.ReturnValuesOnConditionCheckFailure = all
	case it.Delete != nil:
		it.Delete.ReturnValuesOnConditionCheckFailure = all
	case it.Update != nil:
		it.Update.ReturnValuesOnConditionCheckFailure = all
	case it.ConditionCheck != nil:
		it.ConditionCheck.ReturnValuesOnConditionCheckFailure = all
	}
}

// refused is the refusal that explains the failed labels, or nil. A refusal explains a
// cancellation only when every failed condition is refused: when a write without one failed too
// (the item itself changed or vanished, the caller's guard no longer holds), the refusal may be
// a symptom of that change, so the caller gets the *CanceledError and reads again. old holds
// the items DynamoDB returned for the failed writes, by label.
func (t *Tx) refused(failed []string, old map[string]Item) error {
	var first error
	for _, l := range failed {
		explain, ok := t.refusal[l]
		if !ok {
			return nil
		}
		e := explain(old[l])
		if e == nil {
			return nil
		}
		if first == nil {
			first = e
		}
	}
	return first
}

// Len is the number of writes collected so far.
func (t *Tx) Len() int { return len(t.items) }

// Put writes item (a struct with dynamodbav tags including pk and sk) if cond holds.
func (t *Tx) Put(label string, item any, cond ...expression.ConditionBuilder) {
	av, err := attributevalue.MarshalMap(item)
	if err != nil {
		t.fail(fmt.Errorf("marshal %s: %w", label, err))
		return
	}
	p := &types.Put{Item: av}
	if !t.condition(cond, &p.ConditionExpression, &p.ExpressionAttributeNames, &p.ExpressionAttributeValues) {
		return
	}
	k := keyOf(av)
	if isResource(k) && createsItem(p) {
		t.stored++
	}
	t.add(label, k, types.TransactWriteItem{Put: p})
}

// PutNew is Put, unconditionally, of an item at a key no item can hold yet (one made of a
// fresh id, such as an event's): its write units are counted as a create's.
func (t *Tx) PutNew(label string, item any) {
	n := len(t.items)
	t.Put(label, item)
	if len(t.items) > n {
		t.fresh = append(t.fresh, n)
	}
}

// Small declares that every item that can exist at k is at most SmallItemBytes (its writers
// keep it so, and a test of theirs holds its largest shape to the bound), so that the
// transaction's check, update or delete of it, unread, is counted as a token's or an
// account's is (units) instead of asked of DynamoDB. It may be called before or after the
// write is added.
func (t *Tx) Small(k Key) {
	if !slices.Contains(t.declared, k) {
		t.declared = append(t.declared, k)
	}
}

// isFresh reports whether the write at position i is a PutNew.
func (t *Tx) isFresh(i int) bool { return slices.Contains(t.fresh, i) }

// Delete removes the item at k if cond holds.
func (t *Tx) Delete(label string, k Key, cond ...expression.ConditionBuilder) {
	d := &types.Delete{Key: k.AV()}
	if !t.condition(cond, &d.ConditionExpression, &d.ExpressionAttributeNames, &d.ExpressionAttributeValues) {
		return
	}
	if isResource(k) {
		t.stored--
	}
	t.add(label, k, types.TransactWriteItem{Delete: d})
}

// condition builds the conjunction of cond, when there is any, into a write's expression,
// names and values; false (the transaction failed) when it cannot be built.
func (t *Tx) condition(cond []expression.ConditionBuilder, expr **string, names *map[string]string, values *map[string]types.AttributeValue) bool {
	c, ok := all(cond)
	if !ok {
		return true
	}
	e, err := expression.NewBuilder().WithCondition(c).Build()
	if err != nil {
		t.fail(err)
		return false
	}
	*expr, *names, *values = e.Condition(), e.Names(), e.Values()
	return true
}

// Update applies upd to the item at k if cond holds.
func (t *Tx) Update(label string, k Key, upd expression.UpdateBuilder, cond ...expression.ConditionBuilder) {
	b := expression.NewBuilder().WithUpdate(upd)
	if c, ok := all(cond); ok {
		b = b.WithCondition(c)
	}
	e, err := b.Build()
	if err != nil {
		t.fail(err)
		return
	}
	t.add(label, k, types.TransactWriteItem{Update: &types.Update{
		Key: k.AV(), UpdateExpression: e.Update(), ConditionExpression: e.Condition(),
		ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values(),
	}})
}

// Check makes the transaction conditional on the item at k satisfying cond, without writing it.
func (t *Tx) Check(label string, k Key, cond expression.ConditionBuilder) {
	e, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		t.fail(err)
		return
	}
	t.add(label, k, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		Key: k.AV(), ConditionExpression: e.Condition(),
		ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values(),
	}})
}

func (t *Tx) add(label string, k Key, it types.TransactWriteItem) {
	if t.wantOld[label] {
		returnOld(&it)
	}
	t.items = append(t.items, it)
	t.labels = append(t.labels, label)
	t.keys = append(t.keys, k)
}

// Touches reports whether the transaction already has a write of the item at k (DynamoDB
// allows one per item).
func (t *Tx) Touches(k Key) bool {
	for _, have := range t.keys {
		if have == k {
			return true
		}
	}
	return false
}

func keyOf(av map[string]types.AttributeValue) Key {
	var k Key
	if v, ok := av[AttrPK].(*types.AttributeValueMemberS); ok {
		k.PK = v.Value
	}
	if v, ok := av[AttrSK].(*types.AttributeValueMemberS); ok {
		k.SK = v.Value
	}
	return k
}

func (t *Tx) fail(err error) {
	if t.err == nil {
		t.err = err
	}
}

// all joins conditions with AND; ok is false when there are none.
func all(conds []expression.ConditionBuilder) (expression.ConditionBuilder, bool) {
	switch len(conds) {
	case 0:
		return expression.ConditionBuilder{}, false
	case 1:
		return conds[0], true
	default:
		return expression.And(conds[0], conds[1], conds[2:]...), true
	}
}

// Exists is the condition that the item is present.
func Exists() expression.ConditionBuilder {
	return expression.AttributeExists(expression.Name(AttrPK))
}

// Absent is the condition that the item is not present yet.
func Absent() expression.ConditionBuilder {
	return expression.AttributeNotExists(expression.Name(AttrPK))
}

// AtVersion is the optimistic-concurrency condition: the item still has version v.
func AtVersion(v int64) expression.ConditionBuilder {
	return expression.Name(AttrVersion).Equal(expression.Value(v))
}

// AttrRefs is the reference count of a referenced item (Meta.Refs).
const AttrRefs = "refs"

// Unreferenced is the condition that nothing references the item any more.
func Unreferenced() expression.ConditionBuilder {
	return expression.Or(
		expression.AttributeNotExists(expression.Name(AttrRefs)),
		expression.Name(AttrRefs).LessThanEqual(expression.Value(0)))
}

// CanceledError reports a transaction DynamoDB refused. Failed holds the labels of the writes
// whose condition did not hold; Conflict is set when it lost to a concurrent transaction.
type CanceledError struct {
	Failed   []string
	Conflict bool
	Reasons  []string
	// Old holds, by label, the items DynamoDB returned for failed writes that asked for them
	// (RefuseWith): each as it was when its condition failed, nil when it was absent.
	Old map[string]Item
}

// Error implements error.
func (e *CanceledError) Error() string {
	return fmt.Sprintf("transaction canceled: failed=%v conflict=%v reasons=%v", e.Failed, e.Conflict, e.Reasons)
}

// ConditionFailed reports whether err is a cancelled transaction whose write labelled label
// had a condition that did not hold.
func ConditionFailed(err error, label string) bool {
	var c *CanceledError
	if !errors.As(err, &c) {
		return false
	}
	for _, l := range c.Failed {
		if l == label {
			return true
		}
	}
	return false
}

// IsConflict reports whether err is a transaction that lost to a concurrent one and may be retried.
func IsConflict(err error) bool {
	var c *CanceledError
	return errors.As(err, &c) && c.Conflict && len(c.Failed) == 0
}

// Commit applies every write of tx in one TransactWriteItems call.
// Its errors name the labels of the transaction; callers test them with errors.As or
// ConditionFailed, never ==.
func (db *DB) Commit(ctx context.Context, t *Tx) (err error) {
	defer derrors.Wrap(&err, "store.Commit(%s)", strings.Join(t.labels, ","))
	if t.err != nil {
		return t.err
	}
	if len(t.items) == 0 {
		return nil
	}
	if len(t.items) > MaxTxItems {
		return fmt.Errorf("transaction has %d writes, more than %d", len(t.items), MaxTxItems)
	}
	if err := t.checkSizes(); err != nil {
		return err
	}
	for i := range t.items {
		setTable(&t.items[i], db.Table)
	}
	// Under a tally, the transaction's write units are counted (units) or, when they cannot be,
	// asked of DynamoDB.
	tally := metrics.TallyOf(ctx)
	var counted []float64
	ask := types.ReturnConsumedCapacity("")
	if tally != nil {
		counted, _ = t.units(ctx)
		if counted == nil || db.CheckUnits != nil {
			ask = types.ReturnConsumedCapacityTotal
		}
	}
	res, err := db.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: t.items, ReturnConsumedCapacity: ask})
	if tally != nil && err == nil {
		if db.CheckUnits != nil {
			db.CheckUnits(t.items, counted, units(res.ConsumedCapacity))
		}
		if counted != nil {
			tally.AddCapacity(0, sum(counted))
		} else {
			addWrite(ctx, res.ConsumedCapacity...)
		}
		tally.AddCommit(t.stored)
	}
	var dep *DependencyError
	if errors.As(err, &dep) {
		return err // a cancellation after an attempt that may have applied is no answer (classify)
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		c := &CanceledError{}
		for i, r := range tce.CancellationReasons {
			code := aws.ToString(r.Code)
			c.Reasons = append(c.Reasons, code)
			switch code {
			case "ConditionalCheckFailed":
				if i < len(t.labels) {
					c.Failed = append(c.Failed, t.labels[i])
					if c.Old == nil {
						c.Old = make(map[string]Item)
					}
					c.Old[t.labels[i]] = r.Item
				}
			case "TransactionConflict":
				c.Conflict = true
			}
		}
		if e := t.refused(c.Failed, c.Old); e != nil {
			return e
		}
		return c
	}
	return err
}

func setTable(it *types.TransactWriteItem, table string) {
	switch {
	case it.Put != nil:
		it.Put.TableName = &table
	case it.Delete != nil:
		it.Delete.TableName = &table
	case it.Update != nil:
		it.Update.TableName = &table
	case it.ConditionCheck != nil:
		it.ConditionCheck.TableName = &table
	}
}

// Holds is the condition that the item is as seen shows it for attrs: absent when seen is nil;
// else present with each of attrs equal to its value in seen, or absent where seen has none.
func Holds(seen Item, attrs ...string) expression.ConditionBuilder {
	if seen == nil {
		return Absent()
	}
	conds := []expression.ConditionBuilder{Exists()}
	for _, a := range attrs {
		if v, ok := seen[a]; ok {
			conds = append(conds, expression.Name(a).Equal(expression.Value(v))) // an AttributeValue is marshalled as it is
		} else {
			conds = append(conds, expression.AttributeNotExists(expression.Name(a)))
		}
	}
	c, _ := all(conds)
	return c
}

// isResource reports whether k is the key of a resource of an account: an item of one of its
// collections (Collection), the only partitions named A#<account>#….
func isResource(k Key) bool {
	rest, ok := strings.CutPrefix(k.PK, "A#")
	return ok && strings.IndexByte(rest, '#') > 0
}

// absent is Absent() as built into a write (its condition and names): a resource's create is
// a Put with this condition alone (an overwrite of an existing resource conditions on its
// version). Built once, on the first Put.
var absent struct {
	once  sync.Once
	cond  string
	names map[string]string
}

// createsItem reports whether p creates its item: its only condition is Absent.
func createsItem(p *types.Put) bool {
	absent.once.Do(func() {
		e, _ := expression.NewBuilder().WithCondition(Absent()).Build() // a constant condition: it cannot fail
		absent.cond, absent.names = aws.ToString(e.Condition()), e.Names()
	})
	return aws.ToString(p.ConditionExpression) == absent.cond && maps.Equal(p.ExpressionAttributeNames, absent.names)
}
