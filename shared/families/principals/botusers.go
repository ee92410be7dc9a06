package principals

import (
	"context"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// BotUserItem is a non-human principal: a bot user (bot_…) or a service user (service_…), the same
// kind of principal stored and served alike under two paths. An inactive or deleted bot's keys
// are refused at once: a request by one of them reads the bot's own item with its token (or
// conditions its write on it) and finds it inactive or gone (auth.AttrActive). Nothing of the
// bot is kept anywhere else, so bots coming and going leave the account item as it was.
type BotUserItem struct {
	store.Meta
	Name   string `dynamodbav:"name"`
	Active bool   `dynamodbav:"active"` // auth.AttrActive
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
	Binding: func() resource.Binding { return resource.Bind(newBotUsers) },
}

// ServiceUsersDescriptor is the /service_users family: bot users by the platform's newer name,
// with their own ids (service_…), list and events, and the same rules (BotUsers).
var ServiceUsersDescriptor = &resource.Descriptor{
	Path: "/service_users", Prefix: ids.ServiceUser, ListKey: "service_users", EventKind: "service_user", Filter: true,
	Binding: func() resource.Binding { return resource.Bind(newBotUsers) },
}

// isBot reports whether id names a bot user or a service user.
func isBot(id string) bool { return ids.Is(id, ids.BotUser) || ids.Is(id, ids.ServiceUser) }

// BotUsers is the rules of bot users and service users.
type BotUsers struct {
	*resource.Family[BotUserItem, *BotUserItem]
}

func newBotUsers(f *resource.Family[BotUserItem, *BotUserItem]) BotUsers { return BotUsers{f} }

// Render returns a bot user as GET returns it.
func (f BotUsers) Render(r *api.Request, b *BotUserItem) any {
	return BotUserJSON{ID: b.ID, URI: resource.URI(r, f.Path, b.ID), Name: b.Name, Active: b.Active, CreatedAt: api.Timestamp(b.CreatedAt)}
}

// Create fills a new bot user from the request body; name is required and active defaults to
// true.
func (BotUsers) Create(ctx context.Context, r *api.Request, b *BotUserItem, m *resource.Mutation) (any, error) {
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
	return nil, nil
}

// Update applies a PATCH body; at least one member must be given. Once active is false, the
// bot's keys are refused.
func (BotUsers) Update(ctx context.Context, r *api.Request, b *BotUserItem, m *resource.Mutation) error {
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
	api.Set(&b.Active, in.Active)
	return nil
}

func checkName(name string) error {
	if len(name) > maxNameBytes {
		return api.Invalid("name", "name is %d bytes long; the limit is %d bytes", len(name), maxNameBytes)
	}
	return nil
}
