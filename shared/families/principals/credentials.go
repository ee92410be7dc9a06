package principals

import (
	"context"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/rules/acl"
)

// CredentialItem is a stored tunnel authtoken credential.
type CredentialItem struct {
	Secret
	ACL []string `dynamodbav:"acl"`
}

// CredentialJSON is the wire form of a tunnel credential.
type CredentialJSON struct {
	ID          string   `json:"id"`
	URI         string   `json:"uri"`
	CreatedAt   string   `json:"created_at"`
	Description string   `json:"description"`
	Metadata    string   `json:"metadata"`
	Token       *string  `json:"token"`
	ACL         []string `json:"acl"`
	OwnerID     string   `json:"owner_id"`
}

// CodeInvalidACL is the credential family's code for a malformed ACL rule.
const CodeInvalidACL = "ERR_NGROK_600"

var credentialTextCodes = api.TextCodes{Description: "ERR_NGROK_604", Metadata: "ERR_NGROK_605"}

type credentialCreate struct {
	Description *string   `json:"description"`
	Metadata    *string   `json:"metadata"`
	ACL         *[]string `json:"acl"`
	OwnerID     *string   `json:"owner_id"`
}

type credentialUpdate struct {
	Description *string   `json:"description"`
	Metadata    *string   `json:"metadata"`
	ACL         *[]string `json:"acl"`
}

// Credentials returns the /credentials family.
func Credentials(k *resource.Kit) *resource.Family[CredentialItem, *CredentialItem] {
	f := &resource.Family[CredentialItem, *CredentialItem]{
		Kit: k, Prefix: ids.Credential, Path: "/credentials", ListKey: "credentials", EventKind: "tunnel_credential", Filter: true,
	}
	render := func(r *api.Request, it *CredentialItem, token *string) CredentialJSON {
		rules := it.ACL
		if rules == nil {
			rules = []string{}
		}
		return CredentialJSON{ID: it.ID, URI: f.URI(r, it.ID), CreatedAt: api.Timestamp(it.CreatedAt),
			Description: it.Description, Metadata: it.Metadata, Token: token, ACL: rules, OwnerID: it.OwnerID}
	}
	f.Render = func(r *api.Request, it *CredentialItem) any { return render(r, it, nil) }
	f.Create = func(ctx context.Context, r *api.Request, it *CredentialItem, m *resource.Mutation) (any, error) {
		var in credentialCreate
		if err := api.Decode(r, &in); err != nil {
			return nil, err
		}
		if err := setACL(it, in.ACL); err != nil {
			return nil, err
		}
		token, err := it.Create(ctx, k, r, m, credentialTextCodes, auth.KindCredential, in.Description, in.Metadata, in.OwnerID)
		if err != nil {
			return nil, err
		}
		return render(r, it, &token), nil
	}
	f.Update = func(ctx context.Context, r *api.Request, it *CredentialItem, m *resource.Mutation) error {
		var in credentialUpdate
		if err := api.Decode(r, &in); err != nil {
			return err
		}
		if in.Description == nil && in.Metadata == nil && in.ACL == nil {
			return api.EmptyUpdate("description", "metadata", "acl")
		}
		if err := setACL(it, in.ACL); err != nil {
			return err
		}
		return it.Update(credentialTextCodes, in.Description, in.Metadata)
	}
	f.Delete = func(ctx context.Context, r *api.Request, it *CredentialItem, m *resource.Mutation) error {
		it.Revoke(k, m)
		return nil
	}
	return f
}

// setACL validates and stores a supplied ACL; a supplied list replaces the stored one.
func setACL(it *CredentialItem, rules *[]string) error {
	if rules == nil {
		return nil
	}
	if _, i, err := acl.ParseAll(*rules); err != nil {
		return api.BadRequest(CodeInvalidACL, "acl", "acl[%d]: %s", i, err.Error())
	}
	it.ACL = append([]string{}, *rules...)
	return nil
}

// Matcher returns the bind matcher of a stored credential.
func (c *CredentialItem) Matcher() acl.ACL {
	a, _, _ := acl.ParseAll(c.ACL)
	return a
}
