package principals

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// BotUser is a non-human principal: a bot user (bot_…) or a service user (service_…), the same
// kind of principal stored and served alike under two paths. An inactive or deleted bot's keys
// are refused at once: its id sits in the account item's revoked set, which every request reads
// or conditions on.
type BotUser struct {
	store.Meta
	Name   string `dynamodbav:"name"`
	Active bool   `dynamodbav:"active"`
}

// BotUserJSON is the wire form of a bot user or service user.
type BotUserJSON struct {
	ID        string `json:"id"`
	URI       string `json:"uri"`
	Name      string `json:"name"`
	Active    bool   `json:"active"`
	CreatedAt string `json:"created_at"`
}

type botUserBody struct {
	Name   *string `json:"name"`
	Active *bool   `json:"active"`
}

// maxNameBytes bounds a bot's name like other free-text fields.
const maxNameBytes = 255

// BotUsersDescriptor is the /bot_users family.
var BotUsersDescriptor = &resource.Descriptor{
	Path: "/bot_users", Prefix: ids.BotUser, ListKey: "bot_users", EventKind: "bot_user",
	Function: "BotUsersFunction", Dir: "bot_users",
	Serve: func() resource.Serving { return resource.Serve(resource.Wrap[BotUsers]) },
}

// ServiceUsersDescriptor is the /service_users family: bot users by the platform's newer name,
// with their own ids (service_…), list and events, and the same rules (BotUsers).
var ServiceUsersDescriptor = &resource.Descriptor{
	Path: "/service_users", Prefix: ids.ServiceUser, ListKey: "service_users", EventKind: "service_user", Filter: true,
	Function: "ServiceUsersFunction", Dir: "service_users",
	Serve: func() resource.Serving { return resource.Serve(resource.Wrap[BotUsers]) },
}

// isBot reports whether id names a bot user or a service user.
func isBot(id string) bool { return ids.Is(id, ids.BotUser) || ids.Is(id, ids.ServiceUser) }

// BotUsers is the rules of bot users and service users.
type BotUsers struct {
	*resource.Family[BotUser, *BotUser]
}

// Render returns a bot user as GET returns it.
func (f BotUsers) Render(r *api.Request, b *BotUser) any {
	return BotUserJSON{ID: b.ID, URI: f.URI(r, b.ID), Name: b.Name, Active: b.Active, CreatedAt: api.Timestamp(b.CreatedAt)}
}

// Create fills a new bot user from the request body; name is required and active defaults to
// true. A bot created inactive is revoked in the same transaction.
func (BotUsers) Create(ctx context.Context, r *api.Request, b *BotUser, m *resource.Mutation) (any, error) {
	var in botUserBody
	if err := api.Decode(r, &in); err != nil {
		return nil, err
	}
	if in.Name == nil || *in.Name == "" {
		return nil, api.Invalid("name", "name is required")
	}
	if err := checkName(*in.Name); err != nil {
		return nil, err
	}
	b.Name, b.Active = *in.Name, true
	api.Set(&b.Active, in.Active)
	if !b.Active {
		m.UpdateAccount(revoke(b.ID, true))
	}
	return nil, nil
}

// Update applies a PATCH body; at least one member must be given. A change of active adds the
// bot to, or removes it from, the account's revoked set.
func (BotUsers) Update(ctx context.Context, r *api.Request, b *BotUser, m *resource.Mutation) error {
	var in botUserBody
	if err := api.DecodePatch(r, &in); err != nil {
		return err
	}
	if in.Name != nil {
		if *in.Name == "" {
			return api.Invalid("name", "name must not be empty")
		}
		if err := checkName(*in.Name); err != nil {
			return err
		}
	}
	api.Set(&b.Name, in.Name)
	if in.Active != nil && *in.Active != b.Active {
		b.Active = *in.Active
		m.UpdateAccount(revoke(b.ID, !b.Active))
	}
	return nil
}

// Delete revokes the bot: its keys stay listed until deleted but can never authenticate again.
func (BotUsers) Delete(ctx context.Context, r *api.Request, b *BotUser, m *resource.Mutation) error {
	m.UpdateAccount(revoke(b.ID, true))
	return nil
}

func checkName(name string) error {
	if len(name) > maxNameBytes {
		return api.Invalid("name", "name is %d bytes long; the limit is %d bytes", len(name), maxNameBytes)
	}
	return nil
}

// revoke adds principal to (or removes it from) the account's revoked set.
func revoke(principal string, revoked bool) expression.UpdateBuilder {
	set := expression.Value(&types.AttributeValueMemberSS{Value: []string{principal}})
	if revoked {
		return expression.Add(expression.Name("revoked"), set)
	}
	return expression.Delete(expression.Name("revoked"), set)
}
