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
	SecretBase
	BindRules
}

// BindRules is the bind ACL of a tunnel or SSH credential: which hostnames, addresses and
// labels it may bind.
type BindRules struct {
	ACL []string `dynamodbav:"acl"`
}

// CredentialJSON is the wire form of a tunnel credential.
type CredentialJSON struct {
	resource.Head
	Token   *string  `json:"token"`
	ACL     []string `json:"acl"`
	OwnerID string   `json:"owner_id"`
}

// CodeInvalidACL is the code of tunnel and SSH credentials for a malformed ACL rule.
const CodeInvalidACL = "ERR_NGROK_600"

type credentialUpdate struct {
	api.Text
	ACL *[]string `json:"acl"`
}

// CredentialCreate is a POST body: what an update may send, and the owner, which cannot change.
type CredentialCreate struct {
	credentialUpdate
	OwnerID *string `json:"owner_id"`
}

// CredentialsDescriptor is the /credentials family.
var CredentialsDescriptor = &resource.Descriptor{
	Path: "/credentials", Prefix: ids.Credential, ListKey: "credentials", EventKind: "tunnel_credential", Filter: true,
	Binding: func() resource.Binding { return resource.Bind(newCredentials).Keeping(resource.Seals | resource.Opens) },
	Release: TokenRelease{},
}

// Credentials is the tunnel credential family's rules.
type Credentials struct {
	secretHooks[CredentialItem, *CredentialItem]
}

func newCredentials(f *resource.Family[CredentialItem, *CredentialItem]) Credentials {
	return Credentials{secretHooks[CredentialItem, *CredentialItem]{f}}
}

// Render returns a credential as GET returns it: without its token.
func (f Credentials) Render(r *api.Request, it *CredentialItem) any { return f.render(r, it, nil) }

func (f Credentials) render(r *api.Request, it *CredentialItem, token *string) CredentialJSON {
	return CredentialJSON{Head: resource.NewHead(r, f.Path, &it.Meta, it.Described), Token: token, ACL: api.Slice(it.ACL), OwnerID: it.OwnerID}
}

// Create fills a new credential from the request body and issues its token, shown only in the
// create response.
func (f Credentials) Create(ctx context.Context, r *api.Request, it *CredentialItem, m *resource.Mutation) (any, error) {
	var in CredentialCreate
	if err := api.Decode(r, &in); err != nil {
		return nil, err
	}
	if err := it.SetACL(in.ACL); err != nil {
		return nil, err
	}
	token, err := it.Issue(ctx, f.Kit, r, m, auth.KindCredential, in.Text, in.OwnerID)
	if err != nil {
		return nil, err
	}
	return f.render(r, it, &token), nil
}

// Update applies a PATCH body; at least one member must be given.
func (Credentials) Update(ctx context.Context, r *api.Request, it *CredentialItem, m *resource.Mutation) error {
	return UpdateCredential(r, &it.Described, &it.BindRules)
}

// UpdateCredential applies the PATCH body of a tunnel or SSH credential (description, metadata,
// acl) to its text d and rules b; at least one member must be given.
func UpdateCredential(r *api.Request, d *resource.Described, b *BindRules) error {
	var in credentialUpdate
	if err := api.DecodePatch(r, &in); err != nil {
		return err
	}
	if err := b.SetACL(in.ACL); err != nil {
		return err
	}
	return d.SetText(SecretTextCodes, in.Text)
}

// MaxACLRules bounds a tunnel or SSH credential's ACL. The platform documents no limit; this one keeps
// checking a bind against the ACL cheap and the credential far below the size of one stored
// item (the item and its audit event are measured before writing as well).
const MaxACLRules = 1000

// SetACL validates and stores a supplied ACL; a supplied list replaces the stored one.
func (c *BindRules) SetACL(rules *[]string) error {
	if rules == nil {
		return nil
	}
	if len(*rules) > MaxACLRules {
		return api.Invalid("acl", "acl has %d rules; a credential has at most %d", len(*rules), MaxACLRules)
	}
	if _, i, err := acl.ParseAll(*rules); err != nil {
		return api.BadRequest(CodeInvalidACL, "acl", "acl[%d]: %s", i, err.Error())
	}
	c.ACL = append([]string{}, *rules...)
	return nil
}

// Matcher returns the bind matcher of a stored credential.
func (c *BindRules) Matcher() acl.ACL {
	a, _, _ := acl.ParseAll(c.ACL)
	return a
}
