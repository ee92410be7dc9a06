package domains

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// CodeWildcardConflict is the refusal of a wildcard covering a name another account holds, and
// of a name covered by another account's wildcard.
const CodeWildcardConflict = "ERR_NGROK_417"

// The cover guard of a parent P (U#domain_cover#P) decides, in each reservation's own
// transaction, whether a wildcard *.P and the names one label under P may coexist: they may
// only when one account holds all of them. It holds the account of the wildcard (wildcard),
// the number of names reserved under P (n) and, per account holding some, that account's
// number (n_<account>). A name reservation adds one to both counts on the condition that no
// other account holds the wildcard; a wildcard reservation sets wildcard on the condition that
// every name under P is its account's (n equals its own count). Both write the same item, so
// of two concurrent reservations that conflict, at most one commits.
const (
	labelCover    = "domain.cover"
	attrCoverWild = "wildcard"
	attrCoverN    = "n"
)

func coverKey(parent string) store.Key { return store.GuardKey("domain_cover", parent) }

func coverCount(account string) expression.NameBuilder { return expression.Name("n_" + account) }

// coverParent is the parent P whose cover guard a reservation of name takes part in: the
// parent of a wildcard *.P, or of a name one label under P when *.P could be reserved at all;
// "" otherwise (names under a public suffix or the base domain, where no wildcard can exist,
// so their reservations never meet on one item).
func (f ReservedDomains) coverParent(name Name) string {
	if name.Wildcard() {
		return strings.TrimPrefix(string(name), "*.")
	}
	_, parent, _ := strings.Cut(string(name), ".")
	wild, err := ParseName("domain", "*."+parent, true)
	if err != nil {
		return ""
	}
	if _, err := f.classify(wild); err != nil {
		return ""
	}
	return parent
}

// claimCover adds the reservation's write of its cover guard to m (see coverKey), refused with
// 417 when another account's wildcard covers the name, or another account's name is covered by
// the wildcard.
func claimCover(m *resource.Mutation, it *ReservedDomainItem) {
	if it.CoverParent == "" {
		return
	}
	wild, total, mine := expression.Name(attrCoverWild), expression.Name(attrCoverN), coverCount(it.AccountID)
	if Name(it.Domain).Wildcard() {
		m.Update(labelCover, coverKey(it.CoverParent), expression.Set(wild, expression.Value(it.AccountID)),
			expression.Or(expression.AttributeNotExists(total), total.Equal(expression.Value(0)), total.Equal(mine)))
		m.Refuse(labelCover, api.BadRequest(CodeWildcardConflict, "domain",
			"%s covers a name under %s that another account has reserved", it.Domain, it.CoverParent))
		return
	}
	m.Update(labelCover, coverKey(it.CoverParent), expression.Add(total, expression.Value(1)).Add(mine, expression.Value(1)),
		expression.Or(expression.AttributeNotExists(wild), wild.Equal(expression.Value(it.AccountID))))
	m.Refuse(labelCover, api.BadRequest(CodeWildcardConflict, "domain",
		"%s is covered by the wildcard *.%s, which another account has reserved", it.Domain, it.CoverParent))
}

// releaseCover undoes claimCover in the deletion's transaction.
func releaseCover(m *resource.Mutation, it *ReservedDomainItem) {
	if it.CoverParent == "" {
		return
	}
	upd := expression.Remove(expression.Name(attrCoverWild))
	if !Name(it.Domain).Wildcard() {
		upd = expression.Add(expression.Name(attrCoverN), expression.Value(-1)).Add(coverCount(it.AccountID), expression.Value(-1))
	}
	m.Update(labelCover+".release", coverKey(it.CoverParent), upd)
}
