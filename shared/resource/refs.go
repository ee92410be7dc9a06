package resource

import (
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/api"
	"tunnelapi/shared/store"
)

// Referenced is embedded by items that other items refer to by id (an IP policy referred to by
// restrictions and, later, edge modules). Refs counts the referrers; it is changed only through
// Mutation.Reference, in the referrer's own transaction.
type Referenced struct {
	Refs int64 `dynamodbav:"refs"`
}

// Touch adds to m an update of another item (a parent or a referenced item) that also bumps its
// version, so a concurrent PATCH or DELETE of that item, which conditions on the version it
// read, retries and sees the change. The item must exist and satisfy cond; when it does not,
// the whole mutation is read and built again (RetryOn), so the caller decides what a missing
// or changed item means from a fresh read rather than from a bare condition failure.
func (m *Mutation) Touch(label string, key store.Key, upd expression.UpdateBuilder, cond ...expression.ConditionBuilder) {
	upd = upd.Add(expression.Name(store.AttrVersion), expression.Value(1))
	m.Update(label, key, upd, append([]expression.ConditionBuilder{store.Exists()}, cond...)...)
	m.RetryOn(label)
}

// Reference records that delta more (or, when negative, fewer) referrers point at the item at
// key, in m's transaction. A referrer can therefore never be created against an item whose
// deletion commits first, and the item's delete (which reads Refs and conditions on its
// version) can never succeed while a referrer exists.
func (m *Mutation) Reference(label string, key store.Key, delta int64, cond ...expression.ConditionBuilder) {
	m.Touch(label, key, expression.Add(expression.Name("refs"), expression.Value(delta)), cond...)
}

// CheckUnreferenced is the Delete hook's guard for a Referenced item: err (a 4xx naming why)
// while anything still refers to it.
func CheckUnreferenced(it *Referenced, err *api.Error) error {
	if it.Refs > 0 {
		return err
	}
	return nil
}
