package principals

import (
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// UserItem is a human member of an account. Users are made by bootstrap; admins may manage every
// resource of the account and assign owners.
type UserItem struct {
	store.Meta
	Email string `dynamodbav:"email"`
	Admin bool   `dynamodbav:"admin"`
}

// Owner is a principal that a new key or credential will belong to.
type Owner struct {
	ID      string
	Admin   bool
	Subject string
}

// owners is what this process knows of the users, bot users and service users that secrets
// were made for: the attributes a token item copies from its owner (a user's email and admin
// flag, a bot's name), each asserted by the transaction that uses it (resource.Facts).
var owners = resource.NewFacts("email", "admin", "name")

// ResolveOwner returns the owner of a new secret: the caller by default; another user, bot user
// or service user of the account only when the caller is an admin (630). Another owner is taken from what the
// process knows of it, which m's transaction asserts (so it cannot vanish or change between
// being known and the commit): in a warm process the secret is one DynamoDB call.
func ResolveOwner(r *api.Request, m *resource.Mutation, supplied *string) (Owner, error) {
	c := r.Caller()
	if supplied == nil || *supplied == c.PrincipalID {
		return Owner{ID: c.PrincipalID, Admin: c.Admin, Subject: c.Subject}, nil
	}
	id := *supplied
	if !ids.Is(id, ids.User) && !isBot(id) {
		return Owner{}, api.Invalid("owner_id", "owner_id %s is not the id of a user (usr_…), bot user (bot_…) or service user (service_…)", api.Describe(id))
	}
	if !c.Admin {
		return Owner{}, api.BadRequest(api.CodeOwnerNeedsAdmin, "owner_id", "only an admin may set owner_id to a principal other than itself")
	}
	seen := owners.Assume(m, store.ResourceKey(c.AccountID, id))[0]
	if seen == nil {
		return Owner{}, api.Invalid("owner_id", "owner_id %s is not a user, bot user or service user of this account", api.Describe(id))
	}
	if ids.Is(id, ids.User) {
		var u UserItem
		if err := store.Unmarshal(seen, &u); err != nil {
			return Owner{}, err
		}
		return Owner{ID: id, Admin: u.Admin, Subject: u.Email}, nil
	}
	var b BotUserItem
	if err := store.Unmarshal(seen, &b); err != nil {
		return Owner{}, err
	}
	return Owner{ID: id, Subject: b.Name}, nil
}

// IssueToken makes the bearer secret of resource id (an API key or credential) owned by o, adds
// its hash item to m, and returns the secret (shown once) and its hash (stored on the resource).
func IssueToken(m *resource.Mutation, kind, accountID, id string, o Owner) (token, hash string) {
	token = ids.NewToken(id)
	hash = store.TokenHash(token)
	m.Put("token", auth.TokenItem{Key: store.TokenKey(hash), Kind: kind, AccountID: accountID,
		PrincipalID: o.ID, Subject: o.Subject, Admin: o.Admin, ResourceID: id}, store.Absent())
	return token, hash
}
