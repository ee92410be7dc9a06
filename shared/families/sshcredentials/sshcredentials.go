package sshcredentials

import (
	"context"
	"errors"

	"golang.org/x/crypto/ssh"

	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/rules/sshkey"
)

// SSHCredentialItem is a stored SSH credential: a public key its owner's agents authenticate
// with, held to bind rules like a tunnel credential.
type SSHCredentialItem struct {
	store.Meta
	resource.Described
	principals.BindRules
	OwnerID   string `dynamodbav:"owner"`
	PublicKey string `dynamodbav:"public_key"`
	// Fingerprint is the key's SHA-256 fingerprint: the value of its uniqueness guard.
	Fingerprint string `dynamodbav:"fingerprint"`
}

// SSHCredentialJSON is the wire form of an SSH credential.
type SSHCredentialJSON struct {
	resource.Head
	PublicKey string   `json:"public_key"`
	ACL       []string `json:"acl"`
	OwnerID   string   `json:"owner_id"`
}

// The SSH credential family's codes for its public key.
const (
	CodeSSHKeyOnAccount    = "ERR_NGROK_609"
	CodeSSHKeyOtherAccount = "ERR_NGROK_610"
	CodeSSHKeyMissing      = "ERR_NGROK_611"
	CodeSSHKeyInvalid      = "ERR_NGROK_612"
)

// MinSSHCredentialRSABits is the smallest RSA key an SSH credential accepts.
const MinSSHCredentialRSABits = 2048

// sshCredentialCreate is a POST body: a credential's members and the public key, which cannot
// change.
type sshCredentialCreate struct {
	principals.CredentialCreate
	PublicKey *string `json:"public_key"`
}

// SSHCredentialsDescriptor is the /ssh_credentials family.
var SSHCredentialsDescriptor = &resource.Descriptor{
	Path: "/ssh_credentials", Prefix: ids.SSHCredential, ListKey: "ssh_credentials", EventKind: "ssh_public_key", Filter: true,
	Binding: func() resource.Binding { return resource.Bind(newSSHCredentials) },
	Release: KeyRelease{},
}

// SSHCredentials is the SSH credential family's rules.
type SSHCredentials struct {
	*resource.Family[SSHCredentialItem, *SSHCredentialItem]
}

func newSSHCredentials(f *resource.Family[SSHCredentialItem, *SSHCredentialItem]) SSHCredentials {
	return SSHCredentials{f}
}

// Render returns an SSH credential as GET returns it.
func (f SSHCredentials) Render(r *api.Request, it *SSHCredentialItem) any {
	return SSHCredentialJSON{Head: resource.NewHead(r, f.Path, &it.Meta, it.Described), PublicKey: it.PublicKey,
		ACL: api.Slice(it.ACL), OwnerID: it.OwnerID}
}

// labelSSHKey labels the write of a key's uniqueness guard.
const labelSSHKey = "ssh_key"

// sshKeyGuard holds a public key for the credential that registered it, across all accounts.
type sshKeyGuard struct {
	store.Key
	AccountID string `dynamodbav:"account"`
	ID        string `dynamodbav:"id"`
}

// sshKeyGuardKey is the guard of the key with fingerprint fp.
func sshKeyGuardKey(fp string) store.Key { return store.GuardKey("ssh_public_key", fp) }

// Create fills a new SSH credential from the request body. The key is claimed by a guard in the
// credential's own transaction, so of racing creates with one key exactly one commits; the
// others are 609 (already on this account) or 610 (on another account).
func (SSHCredentials) Create(ctx context.Context, r *api.Request, it *SSHCredentialItem, m *resource.Mutation) (any, error) {
	var in sshCredentialCreate
	if err := api.Decode(r, &in); err != nil {
		return nil, err
	}
	if in.PublicKey == nil {
		return nil, api.BadRequest(CodeSSHKeyMissing, "public_key", "public_key is required")
	}
	pub, _, err := sshkey.Parse(*in.PublicKey, MinSSHCredentialRSABits)
	switch {
	case errors.Is(err, sshkey.ErrMissing):
		return nil, api.BadRequest(CodeSSHKeyMissing, "public_key", "public_key is required")
	case err != nil:
		return nil, api.BadRequest(CodeSSHKeyInvalid, "public_key", "%s", err.Error())
	}
	if err := it.SetACL(in.ACL); err != nil {
		return nil, err
	}
	if err := it.Described.SetText(principals.SecretTextCodes, in.Text); err != nil {
		return nil, err
	}
	o, err := principals.ResolveOwner(r, m, in.OwnerID)
	if err != nil {
		return nil, err
	}
	it.OwnerID, it.PublicKey, it.Fingerprint = o.ID, *in.PublicKey, ssh.FingerprintSHA256(pub)
	m.Put(labelSSHKey, sshKeyGuard{Key: sshKeyGuardKey(it.Fingerprint), AccountID: it.AccountID, ID: it.ID}, store.Absent())
	m.RefuseWith(labelSSHKey, func(old store.Item) error {
		var held sshKeyGuard
		if old == nil || store.Unmarshal(old, &held) != nil {
			return nil // released meanwhile: built again
		}
		if held.AccountID == it.AccountID {
			return api.BadRequest(CodeSSHKeyOnAccount, "public_key", "public_key is already on this account, as SSH credential %s", held.ID)
		}
		return api.BadRequest(CodeSSHKeyOtherAccount, "public_key", "public_key is used by another account")
	})
	m.RetryOn(labelSSHKey)
	return nil, nil
}

// Update applies a PATCH body (description, metadata, acl); at least one member must be given.
func (SSHCredentials) Update(ctx context.Context, r *api.Request, it *SSHCredentialItem, m *resource.Mutation) error {
	return principals.UpdateCredential(r, &it.Described, &it.BindRules)
}

// Delete releases the key's guard with the credential, so the key can be registered again.
func (SSHCredentials) Delete(ctx context.Context, r *api.Request, it *SSHCredentialItem, m *resource.Mutation) error {
	m.Delete(labelSSHKey, sshKeyGuardKey(it.Fingerprint))
	return nil
}

// KeyRelease frees the guard of a stored credential's public key (resource.Descriptor.Release).
type KeyRelease struct{}

// Release implements resource.Releaser.
func (KeyRelease) Release(_ context.Context, _ *store.DB, it store.Item, tx *store.Tx) error {
	a := store.Attrs{Item: it}
	resource.Free(tx, a.String("account"), sshKeyGuardKey(a.String("fingerprint")))
	return a.Err()
}
