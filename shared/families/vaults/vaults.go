package vaults

import (
	"context"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// VaultItem is a stored vault.
type VaultItem struct {
	store.Meta
	resource.Described
	Name      string `dynamodbav:"name"`
	UpdatedAt int64  `dynamodbav:"updated"`
	CreatedBy string `dynamodbav:"created_by"`
	UpdatedBy string `dynamodbav:"updated_by"`
	// Secrets indexes the vault's secrets: indexKey(name) → secret id. Never nil once stored,
	// as DynamoDB cannot set a key inside a map attribute that does not exist.
	Secrets map[string]string `dynamodbav:"secrets"`
}

// attrSecrets is the attribute of a vault's secret index.
const attrSecrets = "secrets"

// VaultJSON is the wire form of a vault.
type VaultJSON struct {
	NamedHead
	CreatedBy     string `json:"created_by"`
	LastUpdatedBy string `json:"last_updated_by"`
}

// vaultBody is a create or PATCH body.
type vaultBody struct {
	api.Text
	Name *string `json:"name"`
}

// The families' paths, which each renders references to.
const (
	vaultsPath  = "/vaults"
	secretsPath = "/vault_secrets"
)

// VaultsDescriptor is the /vaults family.
var VaultsDescriptor = &resource.Descriptor{
	Path: vaultsPath, Prefix: ids.Vault, ListKey: "vaults", EventKind: "vault", Filter: true,
	Binding: func() resource.Binding {
		return resource.Bind(newVaults, resource.Route[Vaults]{
			Method: http.MethodGet, Pattern: "/{id}/secrets", Status: http.StatusOK, Handle: Vaults.listSecrets})
	},
	Release: NameRelease{},
}

// Vaults is the vault family's rules.
type Vaults struct {
	*resource.Family[VaultItem, *VaultItem]
}

func newVaults(f *resource.Family[VaultItem, *VaultItem]) Vaults { return Vaults{f} }

// Render returns a vault as GET returns it.
func (f Vaults) Render(r *api.Request, it *VaultItem) any {
	return VaultJSON{NamedHead: namedHead(resource.URI(r, f.Path, it.ID), it.Meta, it.Described, it.Name, it.UpdatedAt),
		CreatedBy: it.CreatedBy, LastUpdatedBy: it.UpdatedBy}
}

// Create fills a new vault from the body and claims its name in the account (23004).
func (Vaults) Create(ctx context.Context, r *api.Request, it *VaultItem, m *resource.Mutation) (any, error) {
	var in vaultBody
	if err := it.DecodeCreate(r, textCodes, &in); err != nil {
		return nil, err
	}
	if in.Name == nil {
		return nil, api.BadRequest(CodeVaultNameEmpty, "name", "name is required")
	}
	if err := vaultName.check("name", *in.Name); err != nil {
		return nil, err
	}
	it.Name, it.Secrets = *in.Name, map[string]string{}
	it.UpdatedAt, it.CreatedBy, it.UpdatedBy = it.CreatedAt, r.Caller().PrincipalID, r.Caller().PrincipalID
	claimName(m, it)
	return nil, nil
}

// Update applies a PATCH body; a new name moves the vault's name guard and is written to
// every secret of the vault.
func (Vaults) Update(ctx context.Context, r *api.Request, it *VaultItem, m *resource.Mutation) error {
	var in vaultBody
	if err := it.DecodePatch(r, textCodes, &in); err != nil {
		return err
	}
	next, rename, err := vaultName.renamed(it.Name, in.Name)
	if err != nil {
		return err
	}
	if rename {
		m.Delete("name.release", nameGuardKey(it.AccountID, it.Name))
		it.Name = next
		claimName(m, it)
		for _, id := range it.Secrets {
			m.Touch("secret "+id, store.ResourceKey(it.AccountID, id),
				expression.Set(expression.Name(attrVaultName), expression.Value(it.Name)))
		}
	}
	if it.Secrets == nil {
		it.Secrets = map[string]string{}
	}
	it.UpdatedAt, it.UpdatedBy = nowUnix(), r.Caller().PrincipalID
	return nil
}

// Delete refuses a vault that still holds secrets (23003). The delete conditions on the
// version read, and every secret create, rename and delete bumps it, so the index read is the
// index at commit.
func (Vaults) Delete(ctx context.Context, r *api.Request, it *VaultItem, m *resource.Mutation) error {
	if n := len(it.Secrets); n > 0 {
		return api.BadRequest(CodeVaultNotEmpty, "id", "vault %s still holds %d secret(s); a vault must be empty before it can be deleted", it.ID, n)
	}
	m.Delete("name.release", nameGuardKey(it.AccountID, it.Name))
	return nil
}

// nameGuard holds a vault's name in its account.
type nameGuard struct {
	store.Key
	AccountID string `dynamodbav:"account"`
	ID        string `dynamodbav:"id"`
}

const labelName = "name"

// claimName puts the guard of it's name, refused with 23004 when another vault holds it.
func claimName(m *resource.Mutation, it *VaultItem) {
	m.Put(labelName, nameGuard{Key: nameGuardKey(it.AccountID, it.Name), AccountID: it.AccountID, ID: it.ID}, store.Absent())
	m.Refuse(labelName, api.BadRequest(CodeVaultNameTaken, "name", "a vault named %s already exists in this account; vault names must be unique", api.Describe(it.Name)))
}

// nameGuardKey is the guard of the vault name in account.
func nameGuardKey(account, name string) store.Key {
	return store.GuardKey("vault_name", account+"|"+name)
}

// NameRelease frees the guard of a stored vault's name (resource.Descriptor.Release).
type NameRelease struct{}

// Release implements resource.Releaser.
func (NameRelease) Release(_ context.Context, _ *store.DB, it store.Item, tx *store.Tx) error {
	a := store.Attrs{Item: it}
	account := a.String("account")
	resource.Free(tx, account, nameGuardKey(account, a.String("name")))
	return a.Err()
}
