package principals

import (
	"context"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// APIKeyItem is a stored API key. Only its token's hash is kept.
type APIKeyItem struct {
	SecretBase
}

// APIKeyJSON is the wire form of an API key.
type APIKeyJSON struct {
	ID  string `json:"id"`
	URI string `json:"uri"`
	resource.DescribedJSON
	CreatedAt string  `json:"created_at"`
	Token     *string `json:"token"`
	OwnerID   string  `json:"owner_id"`
}

type apiKeyCreate struct {
	api.Text
	OwnerID *string `json:"owner_id"`
}

// APIKeysDescriptor is the /api_keys family.
var APIKeysDescriptor = &resource.Descriptor{
	Path: "/api_keys", Prefix: ids.APIKey, ListKey: "keys", EventKind: "api_key", Filter: true,
	Binding: func() resource.Binding { return resource.Bind(newAPIKeys).Keeping(resource.Seals | resource.Opens) },
	Release: TokenRelease{},
}

// APIKeys is the API key family's rules.
type APIKeys struct {
	secretHooks[APIKeyItem, *APIKeyItem]
}

func newAPIKeys(f *resource.Family[APIKeyItem, *APIKeyItem]) APIKeys {
	return APIKeys{secretHooks[APIKeyItem, *APIKeyItem]{f}}
}

// Render returns an API key as GET returns it: without its token.
func (f APIKeys) Render(r *api.Request, it *APIKeyItem) any { return f.render(r, it, nil) }

func (f APIKeys) render(r *api.Request, it *APIKeyItem, token *string) APIKeyJSON {
	return APIKeyJSON{ID: it.ID, URI: resource.URI(r, f.Path, it.ID), DescribedJSON: it.Described.Rendered(),
		CreatedAt: api.Timestamp(it.CreatedAt), Token: token, OwnerID: it.OwnerID}
}

// Create fills a new API key from the request body and issues its token, shown only in the
// create response.
func (f APIKeys) Create(ctx context.Context, r *api.Request, it *APIKeyItem, m *resource.Mutation) (any, error) {
	var in apiKeyCreate
	if err := api.Decode(r, &in); err != nil {
		return nil, err
	}
	token, err := it.Issue(ctx, f.Kit, r, m, auth.KindAPIKey, in.Text, in.OwnerID)
	if err != nil {
		return nil, err
	}
	return f.render(r, it, &token), nil
}

// Update applies a PATCH body of description and metadata; at least one must be given.
func (APIKeys) Update(ctx context.Context, r *api.Request, it *APIKeyItem, m *resource.Mutation) error {
	return it.UpdateText(r, SecretTextCodes)
}

// TokenRelease frees the token item of a stored key or credential (resource.Descriptor.Release).
type TokenRelease struct{}

// Release implements resource.Releaser.
func (TokenRelease) Release(_ context.Context, _ *store.DB, it store.Item, tx *store.Tx) error {
	a := store.Attrs{Item: it}
	resource.Free(tx, a.String("account"), store.TokenKey(a.String("token_hash")))
	return a.Err()
}
