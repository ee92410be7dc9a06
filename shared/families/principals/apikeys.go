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
	Secret
}

// Secret is what API keys and tunnel credentials have in common: free text, an owner, and the
// hash of a bearer token shown once.
type Secret struct {
	store.Meta
	Description string `dynamodbav:"description"`
	Metadata    string `dynamodbav:"metadata"`
	OwnerID     string `dynamodbav:"owner"`
	TokenHash   string `dynamodbav:"token_hash"`
}

// APIKeyJSON is the wire form of an API key.
type APIKeyJSON struct {
	ID          string  `json:"id"`
	URI         string  `json:"uri"`
	Description string  `json:"description"`
	Metadata    string  `json:"metadata"`
	CreatedAt   string  `json:"created_at"`
	Token       *string `json:"token"`
	OwnerID     string  `json:"owner_id"`
}

// apiKeyTextCodes are the API key family's codes for over-long description and metadata.
var apiKeyTextCodes = api.TextCodes{Description: "ERR_NGROK_604", Metadata: "ERR_NGROK_605"}

type apiKeyCreate struct {
	Description *string `json:"description"`
	Metadata    *string `json:"metadata"`
	OwnerID     *string `json:"owner_id"`
}

type apiKeyUpdate struct {
	Description *string `json:"description"`
	Metadata    *string `json:"metadata"`
}

// APIKeys returns the /api_keys family.
func APIKeys(k *resource.Kit) *resource.Family[APIKeyItem, *APIKeyItem] {
	f := &resource.Family[APIKeyItem, *APIKeyItem]{
		Kit: k, Prefix: ids.APIKey, Path: "/api_keys", ListKey: "keys", EventKind: "api_key", Filter: true,
	}
	render := func(r *api.Request, it *APIKeyItem, token *string) APIKeyJSON {
		return APIKeyJSON{ID: it.ID, URI: f.URI(r, it.ID), Description: it.Description, Metadata: it.Metadata,
			CreatedAt: api.Timestamp(it.CreatedAt), Token: token, OwnerID: it.OwnerID}
	}
	f.Render = func(r *api.Request, it *APIKeyItem) any { return render(r, it, nil) }
	f.Create = func(ctx context.Context, r *api.Request, it *APIKeyItem, m *resource.Mutation) (any, error) {
		var in apiKeyCreate
		if err := api.Decode(r, &in); err != nil {
			return nil, err
		}
		token, err := it.Create(ctx, k, r, m, apiKeyTextCodes, auth.KindAPIKey, in.Description, in.Metadata, in.OwnerID)
		if err != nil {
			return nil, err
		}
		return render(r, it, &token), nil
	}
	f.Update = func(ctx context.Context, r *api.Request, it *APIKeyItem, m *resource.Mutation) error {
		var in apiKeyUpdate
		if err := api.Decode(r, &in); err != nil {
			return err
		}
		if in.Description == nil && in.Metadata == nil {
			return api.EmptyUpdate("description", "metadata")
		}
		return it.Update(apiKeyTextCodes, in.Description, in.Metadata)
	}
	f.Delete = func(ctx context.Context, r *api.Request, it *APIKeyItem, m *resource.Mutation) error {
		it.Revoke(k, m)
		return nil
	}
	return f
}

// Create validates the shared fields of a new secret, resolves its owner and issues its token.
func (s *Secret) Create(ctx context.Context, k *resource.Kit, r *api.Request, m *resource.Mutation,
	codes api.TextCodes, kind string, description, metadata, owner *string) (string, error) {
	if err := api.CheckText(codes, description, metadata); err != nil {
		return "", err
	}
	o, err := ResolveOwner(ctx, k, r, m, owner)
	if err != nil {
		return "", err
	}
	api.Set(&s.Description, description)
	api.Set(&s.Metadata, metadata)
	s.OwnerID = o.ID
	token, hash := IssueToken(m, kind, s.AccountID, s.ID, o)
	s.TokenHash = hash
	return token, nil
}

// Update applies the shared free-text fields of a PATCH.
func (s *Secret) Update(codes api.TextCodes, description, metadata *string) error {
	if err := api.CheckText(codes, description, metadata); err != nil {
		return err
	}
	api.Set(&s.Description, description)
	api.Set(&s.Metadata, metadata)
	return nil
}

// Revoke deletes the token hash item with the secret, so the token fails on the next request.
func (s *Secret) Revoke(k *resource.Kit, m *resource.Mutation) {
	// The token must still exist: if the caller is deleting its own key, this is its guard.
	m.Delete("token", store.TokenKey(s.TokenHash), store.Exists())
	m.Refuse("token", auth.ErrUnknownKey)
	k.Auth.Forget(s.TokenHash)
}
