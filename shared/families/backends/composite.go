package backends

import (
	"context"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// Composite is the stored part of a backend that references other backends (failover,
// weighted): their ids, in the backend's order. Each is counted in the child's reference count.
type Composite struct {
	Children []string `dynamodbav:"children"`
}

func (c *Composite) children() []string { return c.Children }

// compositeRules are what sets failover and weighted backends apart when they reference others.
type compositeRules struct {
	kind kind
	// childCode refuses a child the kind may not reference (6525, 6524).
	childCode string
	// max children, and the code of more (6513, 6511).
	max     int
	maxCode string
}

// txReserve is how many writes of a composite backend's update are not its children's: the
// caller's two guards, the item and the audit event's two items, and one to spare.
const txReserve = 6

// link makes next (ids, each the value of the body member fields[i]) the children of the
// composite backend self in m: ids checked (6526, 6527), kinds and self refused (rules'
// childCode), the reference counts of added children raised (6501 when one does not exist) and
// of removed ones lowered. An update that adds children also proves that none of them leads
// back to self, in m's transaction: the composite backends reachable from the added ones are
// read, and the commit conditions on each still having the version read.
//
// A failover backend may reference tunnel group, static, HTTP response and weighted backends; a
// weighted backend tunnel group, static, HTTP response and failover backends. Nesting a kind in
// itself adds nothing the outer one cannot say (a list of lists is one list, weights of weights
// are products) and is refused (6525, 6524), as is a backend naming itself. Failover and
// weighted backends can still nest in each other, so references could form a cycle
// (F1 → W1 → F1), which the platform could never route: no write may create one.
//
// A create cannot close a cycle (nothing references a new id yet). An update that adds children
// walks the composite backends reachable from the added ones (one consistent batch read per
// level) and refuses the update (6525/6524) if it reaches the backend being updated. The walk is
// then made part of the update's transaction: it conditions on the version of every composite
// backend it read, and a backend's children change only with its version. So when the update
// commits, every backend it walked still has the children it read, the walk's answer is the
// truth at the commit, and the only edges that can close a cycle through the updated backend
// (the ones it adds) do not. Two concurrent updates that together would close a cycle each
// walked the other's backend; the first to commit changes that backend's version, so the
// second's transaction fails, is read and built again, walks again and is refused. The walk is
// bounded: an update whose added children reach more composite backends than fit in one
// transaction beside its own writes is refused (400, naming backends) rather than committed
// without the check. The walk costs one batch read per level of failover and weighted backends
// below the added ones; an update adding only tunnel group, static or HTTP response backends
// costs what any update does (a read and a transaction).
func (c *Composite) link(ctx context.Context, k *resource.Kit, r *api.Request, m *resource.Mutation, self string, rules compositeRules, next, fields []string, create bool) error {
	if len(next) > rules.max {
		return api.BadRequest(rules.maxCode, "backends", "a %s backend may reference at most %d backends; this one names %d", rules.kind.name, rules.max, len(next))
	}
	field := map[string]string{}
	for i, id := range next {
		if err := CheckID(fields[i], id); err != nil {
			return err
		}
		ck, _, _ := kindOf(id)
		switch {
		case id == self:
			return api.BadRequest(rules.childCode, fields[i], "a %s backend may not reference itself", rules.kind.name)
		case ck == rules.kind:
			return api.BadRequest(rules.childCode, fields[i], "a %s backend may not reference the backend %s because it is a %s backend", rules.kind.name, id, ck.name)
		}
		field[id] = fields[i]
	}
	var added, removed []string
	for _, id := range next {
		if !slices.Contains(c.Children, id) {
			added = append(added, id)
		}
	}
	for _, id := range c.Children {
		if _, kept := field[id]; !kept {
			removed = append(removed, id)
		}
	}
	var versions map[string]int64
	if !create {
		budget := store.MaxTxItems - txReserve - len(added) - len(removed)
		var err error
		if versions, err = walk(ctx, k, r, self, rules, added, field, budget); err != nil {
			return err
		}
	}
	for _, id := range removed {
		m.Reference(id, -1, nil, atVersion(versions, id)...)
	}
	for _, id := range added {
		if _, walked := versions[id]; walked {
			// A failed version condition is a change to read again, not a missing backend: the
			// walk of the retried update finds out which.
			m.Reference(id, 1, nil, atVersion(versions, id)...)
		} else {
			m.Reference(id, 1, missing(field[id], id))
		}
	}
	for id, v := range versions {
		if !slices.Contains(added, id) && !slices.Contains(removed, id) {
			label := "walk:" + id
			m.Check(label, store.ResourceKey(r.Caller().AccountID, id), store.AtVersion(v))
			m.RetryOn(label)
		}
	}
	c.Children = slices.Clone(next)
	return nil
}

// atVersion is the condition that the walked backend id still has the version read, if it was
// walked.
func atVersion(versions map[string]int64, id string) []expression.ConditionBuilder {
	if v, ok := versions[id]; ok {
		return []expression.ConditionBuilder{store.AtVersion(v)}
	}
	return nil
}

// walk reads, level by level, the composite backends reachable from the added children of self
// and returns the version of each. It refuses (rules' childCode, naming the added child) a
// path back to self, an added composite child that does not exist (6501), and more backends
// than budget.
func walk(ctx context.Context, k *resource.Kit, r *api.Request, self string, rules compositeRules, added []string, field map[string]string, budget int) (_ map[string]int64, err error) {
	defer derrors.Wrap(&err, "backends.walk(%s)", self)
	versions := map[string]int64{}
	from := map[string]string{} // each backend reached: the added child it was reached from
	var frontier []string
	for _, id := range added {
		if ck, _, _ := kindOf(id); ck.composite() {
			from[id] = id
			frontier = append(frontier, id)
		}
	}
	for len(frontier) > 0 {
		if len(versions)+len(frontier) > budget {
			return nil, api.Invalid("backends", "the backends added lead to more than %d failover and weighted backends, more than one update can check for reference cycles", budget)
		}
		keys := make([]store.Key, len(frontier))
		for i, id := range frontier {
			keys[i] = store.ResourceKey(r.Caller().AccountID, id)
		}
		items, err := k.DB.GetMany(ctx, keys...)
		if err != nil {
			return nil, err
		}
		var next []string
		for i, raw := range items {
			id := frontier[i]
			if raw == nil {
				if from[id] == id {
					return nil, missing(field[id], id)
				}
				// Deleted after its referrer was read: the referrer's version changed too, and
				// the commit's condition on it fails.
				continue
			}
			var node struct {
				store.Meta
				Composite
			}
			if err := store.Unmarshal(raw, &node); err != nil {
				return nil, err
			}
			versions[id] = node.Version
			for _, child := range node.Children {
				if child == self {
					origin := from[id]
					return nil, api.BadRequest(rules.childCode, field[origin], "a %s backend may not reference the backend %s: it leads back to this backend, which would make a reference cycle", rules.kind.name, origin)
				}
				if _, seen := from[child]; seen {
					continue
				}
				if ck, _, _ := kindOf(child); ck.composite() {
					from[child] = from[id]
					next = append(next, child)
				}
			}
		}
		frontier = next
	}
	return versions, nil
}
