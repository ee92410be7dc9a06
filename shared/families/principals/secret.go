package principals

import (
	"context"

	"tunnelapi/shared/families/tunnels"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
	// The create responses of keys and credentials show their token once; one kept for an
	// Idempotency-Key replay is sealed, with KMS in AWS.
)

// SecretBase is what API keys and tunnel credentials have in common: free text, an owner, and the
// hash of a bearer token shown once.
type SecretBase struct {
	store.Meta
	resource.Described
	OwnerID   string `dynamodbav:"owner"`
	TokenHash string `dynamodbav:"token_hash"`
}

// SecretTextCodes are the codes of keys and credentials for over-long description and metadata.
var SecretTextCodes = api.TextCodes{Description: "ERR_NGROK_604", Metadata: "ERR_NGROK_605"}

// Issue validates the shared fields of a new secret, resolves its owner and issues its token
// (kind is the token item's kind), which it returns to be shown once.
func (s *SecretBase) Issue(ctx context.Context, k *resource.Kit, r *api.Request, m *resource.Mutation,
	kind string, text api.Text, owner *string) (string, error) {
	if err := s.SetSecretText(text); err != nil {
		return "", err
	}
	o, err := ResolveOwner(r, m, owner)
	if err != nil {
		return "", err
	}
	s.OwnerID = o.ID
	token, hash := IssueToken(m, kind, s.AccountID, s.ID, o)
	s.TokenHash = hash
	return token, nil
}

// SetSecretText checks and sets the free text of a key or credential, with their codes.
func (s *SecretBase) SetSecretText(text api.Text) error {
	return s.Described.SetText(SecretTextCodes, text)
}

// secret gives the generic secret families access to the Secret of an item.
func (s *SecretBase) secret() *SecretBase { return s }

// secretItem is a stored item holding a Secret: *APIKeyItem or *CredentialItem.
type secretItem[T any] interface {
	*T
	store.Resource
	secret() *SecretBase
}

// secretHooks are the hooks the API key and credential families share: the deletion that
// revokes the token. Each embeds them and adds its own Render, Create and Update.
type secretHooks[T any, P secretItem[T]] struct {
	*resource.Family[T, P]
}

// Delete revokes the secret's token in the deletion's transaction; a credential's tunnel
// sessions are marked revoked after it commits (tunnels.Revoke), so their next heartbeat ends
// them.
func (f secretHooks[T, P]) Delete(ctx context.Context, r *api.Request, it P, m *resource.Mutation) error {
	it.secret().Revoke(r, m)
	if b := it.Base(); ids.Is(b.ID, ids.Credential) {
		account, id := b.AccountID, b.ID
		m.AfterCommit(func(ctx context.Context) error {
			return tunnels.Revoke(ctx, f.Kit.DB, account, id, "the tunnel credential "+id+" of this tunnel session was deleted")
		})
	}
	return nil
}

// Revoke deletes the token hash item with the secret, so the token fails on the next request.
// The token item must still exist. When r's caller is deleting its own key, that condition is
// the caller's guard and failing it is the caller's authentication failure; for anyone else's
// token it means a concurrent request deleted the secret first, so the deletion is read again
// and answers 404, never an authentication error.
func (s *SecretBase) Revoke(r *api.Request, m *resource.Mutation) {
	m.Delete("token", store.TokenKey(s.TokenHash), store.Exists())
	if c := r.Caller(); c != nil && c.TokenHash == s.TokenHash {
		m.Refuse("token", auth.ErrUnknownKey)
	} else {
		m.RetryOn("token")
	}
	auth.Of(r).Forget(s.TokenHash)
}
