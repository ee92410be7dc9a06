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

// BotUser is a non-human principal. An inactive or deleted bot's keys are refused at once: its
// id sits in the account item's revoked set, which every request reads or conditions on.
type BotUser struct {
	store.Meta
	Name   string `dynamodbav:"name"`
	Active bool   `dynamodbav:"active"`
}

// BotUserJSON is the wire form of a bot user.
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

// BotUsers returns the /bot_users family.
func BotUsers(k *resource.Kit) *resource.Family[BotUser, *BotUser] {
	f := &resource.Family[BotUser, *BotUser]{
		Kit: k, Prefix: ids.BotUser, Path: "/bot_users", ListKey: "bot_users", EventKind: "bot_user",
	}
	f.Render = func(r *api.Request, b *BotUser) any {
		return BotUserJSON{ID: b.ID, URI: f.URI(r, b.ID), Name: b.Name, Active: b.Active, CreatedAt: api.Timestamp(b.CreatedAt)}
	}
	f.Create = func(ctx context.Context, r *api.Request, b *BotUser, m *resource.Mutation) (any, error) {
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
	f.Update = func(ctx context.Context, r *api.Request, b *BotUser, m *resource.Mutation) error {
		var in botUserBody
		if err := api.Decode(r, &in); err != nil {
			return err
		}
		if in.Name == nil && in.Active == nil {
			return api.EmptyUpdate("name", "active")
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
	f.Delete = func(ctx context.Context, r *api.Request, b *BotUser, m *resource.Mutation) error {
		// A deleted bot's keys stay listed until deleted but can never authenticate again.
		m.UpdateAccount(revoke(b.ID, true))
		return nil
	}
	return f
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
