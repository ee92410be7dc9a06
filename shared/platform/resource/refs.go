package resource

import (
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/store"
)

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

// Repoint moves the reference held in *held to id (either may be ""), in m's transaction: the
// item it leaves loses a reference and the one it reaches gains one (Reference: when that one
// is gone meanwhile, the whole operation is read and built again).
func (m *Mutation) Repoint(held *string, id string) {
	if *held == id {
		return
	}
	if *held != "" {
		m.Reference(*held, -1, nil)
	}
	if id != "" {
		m.Reference(id, 1, nil)
	}
	*held = id
}
