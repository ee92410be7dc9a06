package vaults

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"
)

// SecretItem is a stored secret. Its value is sealed; nothing renders it.
type SecretItem struct {
	store.Meta
	resource.Described
	Name      string      `dynamodbav:"name"`
	VaultID   string      `dynamodbav:"vault"`
	VaultName string      `dynamodbav:"vault_name"`
	Value     seal.Sealed `dynamodbav:"value"`
	UpdatedAt int64       `dynamodbav:"updated"`
	CreatedBy string      `dynamodbav:"created_by"`
	UpdatedBy string      `dynamodbav:"updated_by"`
	// vaultByName is the vault_name a create body named its vault by (Prepare to Create).
	vaultByName string
}

// attrVaultName is the attribute of a secret's vault name, which a vault rename sets.
const attrVaultName = "vault_name"

// SecretJSON is the wire form of a secret: never its value.
type SecretJSON struct {
	NamedHead
	CreatedBy     api.Ref `json:"created_by"`
	LastUpdatedBy api.Ref `json:"last_updated_by"`
	Vault         api.Ref `json:"vault"`
	VaultName     string  `json:"vault_name"`
}

// secretUpdate is a PATCH body; the vault cannot change.
type secretUpdate struct {
	api.Text
	Name  *string `json:"name"`
	Value *string `json:"value"`
}

// secretCreate is a POST body: what a PATCH may send, and the vault, by id or by name.
type secretCreate struct {
	secretUpdate
	VaultID   *string `json:"vault_id"`
	VaultName *string `json:"vault_name"`
}

// SecretsDescriptor is the /vault_secrets family, served by the vaults' function.
var SecretsDescriptor = &resource.Descriptor{
	Path: secretsPath, Prefix: ids.Secret, ListKey: "secrets", EventKind: "secret", Filter: true,
	Binding: func() resource.Binding { return resource.Bind(newSecrets).Keeping(resource.Seals) },
}

// Secrets is the secret family's rules.
type Secrets struct {
	*resource.Family[SecretItem, *SecretItem]
}

func newSecrets(f *resource.Family[SecretItem, *SecretItem]) Secrets { return Secrets{f} }

// vaults is what this process knows of vaults (their names) and of vault name guards (the
// vault holding a name), asserted by every transaction that uses it.
var (
	vaults     = resource.NewFacts("name")
	vaultNames = resource.NewFacts("id")
)

// Render returns a secret as GET returns it.
func (f Secrets) Render(r *api.Request, it *SecretItem) any {
	return renderSecret(r, it)
}

func renderSecret(r *api.Request, it *SecretItem) SecretJSON {
	return SecretJSON{NamedHead: namedHead(r.URI(secretsPath+"/"+it.ID), it.Meta, it.Described, it.Name, it.UpdatedAt),
		CreatedBy: principalRef(r, it.CreatedBy), LastUpdatedBy: principalRef(r, it.UpdatedBy),
		Vault: api.Ref{ID: it.VaultID, URI: r.URI(vaultsPath + "/" + it.VaultID)}, VaultName: it.VaultName}
}

// Prepare checks the body and seals the value, once per request.
func (f Secrets) Prepare(ctx context.Context, r *api.Request, it *SecretItem) error {
	var in secretCreate
	if err := it.DecodeCreate(r, textCodes, &in); err != nil {
		return err
	}
	if in.Name == nil {
		return api.BadRequest(CodeSecretNameEmpty, "name", "name is required")
	}
	if err := secretName.check("name", *in.Name); err != nil {
		return err
	}
	if in.Value == nil {
		return api.BadRequest(CodeSecretValueEmpty, "value", "value is required")
	}
	// The official clients omit empty members; an empty selector is taken as omitted.
	if in.VaultID != nil && *in.VaultID == "" {
		in.VaultID = nil
	}
	if in.VaultName != nil && *in.VaultName == "" {
		in.VaultName = nil
	}
	switch {
	case in.VaultID == nil && in.VaultName == nil:
		return api.BadRequest(CodeVaultRequired, "vault_id", "vault_id (or vault_name) is required: the vault the secret is stored in")
	case in.VaultID != nil && !ids.Is(*in.VaultID, ids.Vault):
		return api.BadRequest(CodeVaultNotFound, "vault_id", "vault_id %s is not a vault id (vault_…)", api.Describe(*in.VaultID))
	case in.VaultName != nil && vaultName.check("vault_name", *in.VaultName) != nil:
		return api.BadRequest(CodeVaultNameNotFound, "vault_name", "there is no vault named %s in this account", api.Describe(*in.VaultName))
	}
	if in.VaultID != nil {
		it.VaultID = *in.VaultID
	}
	if in.VaultName != nil {
		it.vaultByName = *in.VaultName
	}
	it.Name = *in.Name
	it.UpdatedAt, it.CreatedBy, it.UpdatedBy = it.CreatedAt, r.Caller().PrincipalID, r.Caller().PrincipalID
	return f.setValue(ctx, it, *in.Value)
}

// Create adds the secret to its vault's index: the vault must exist (24006, 24009), hold no
// secret of that name (24005) and have room (24007), all decided at commit.
func (Secrets) Create(ctx context.Context, r *api.Request, it *SecretItem, m *resource.Mutation) (any, error) {
	if it.vaultByName != "" {
		guard := vaultNames.Assume(m, nameGuardKey(it.AccountID, it.vaultByName))[0]
		id := ""
		if guard != nil {
			var g nameGuard
			if err := store.Unmarshal(guard, &g); err != nil {
				return nil, err
			}
			id = g.ID
		}
		switch {
		case id == "":
			return nil, api.BadRequest(CodeVaultNameNotFound, "vault_name", "there is no vault named %s in this account", api.Describe(it.vaultByName))
		case it.VaultID != "" && it.VaultID != id:
			return nil, api.Invalid("vault_name", "vault_name %s names vault %s, not vault_id %s", api.Describe(it.vaultByName), id, it.VaultID)
		}
		it.VaultID = id
	}
	label := "vault"
	key := store.ResourceKey(it.AccountID, it.VaultID)
	seen, holds := vaults.AssumeWritten(m, label, key)
	if seen == nil {
		return nil, errVaultNotFound(it.VaultID)
	}
	var v VaultItem
	if err := store.Unmarshal(seen, &v); err != nil {
		return nil, err
	}
	it.VaultName = v.Name
	entry := indexPath(it.Name)
	m.Touch(label, key, expression.Set(entry, expression.Value(it.ID)), holds,
		expression.AttributeNotExists(entry),
		expression.Name(attrSecrets).Size().LessThan(expression.Value(MaxSecretsPerVault)))
	m.RefuseWith(label, func(old store.Item) error {
		if old == nil {
			return errVaultNotFound(it.VaultID)
		}
		var now VaultItem
		if store.Unmarshal(old, &now) != nil || now.Name != v.Name {
			return nil // renamed meanwhile: built again on the vault as it is
		}
		if other, taken := now.Secrets[indexKey(it.Name)]; taken {
			return errNameTaken(now.ID, it.Name, other)
		}
		if len(now.Secrets) >= MaxSecretsPerVault {
			return api.BadRequest(CodeVaultFull, "vault_id", "vault %s already holds the maximum of %d secrets", now.ID, MaxSecretsPerVault)
		}
		return nil
	})
	return nil, nil
}

// Update applies a PATCH body: a new name moves the secret in its vault's index, a new value
// is sealed in place of the old one.
func (f Secrets) Update(ctx context.Context, r *api.Request, it *SecretItem, m *resource.Mutation) error {
	var in secretUpdate
	if err := it.DecodePatch(r, textCodes, &in); err != nil {
		return err
	}
	next, rename, err := secretName.renamed(it.Name, in.Name)
	if err != nil {
		return err
	}
	if rename {
		from, to := indexPath(it.Name), indexPath(next)
		// The vault exists while its secret does: deleting a vault needs it empty.
		m.Touch("vault", store.ResourceKey(it.AccountID, it.VaultID),
			expression.Remove(from).Set(to, expression.Value(it.ID)), expression.AttributeNotExists(to))
		m.Refuse("vault", errNameTaken(it.VaultID, next, ""))
		it.Name = next
	}
	if in.Value != nil {
		if err := f.setValue(ctx, it, *in.Value); err != nil {
			return err
		}
	}
	it.UpdatedAt, it.UpdatedBy = nowUnix(), r.Caller().PrincipalID
	return nil
}

// Delete removes the secret from its vault's index.
func (Secrets) Delete(ctx context.Context, r *api.Request, it *SecretItem, m *resource.Mutation) error {
	m.Touch("vault", store.ResourceKey(it.AccountID, it.VaultID), expression.Remove(indexPath(it.Name)))
	return nil
}

// setValue checks value and seals it to the secret (bound to its account and id).
func (f Secrets) setValue(ctx context.Context, it *SecretItem, value string) error {
	if value == "" {
		return api.BadRequest(CodeSecretValueEmpty, "value", "value must not be empty")
	}
	if len(value) > MaxValueBytes {
		return api.BadRequest(CodeSecretValueLong, "value", "value is %d bytes long; the limit is %d bytes", len(value), MaxValueBytes)
	}
	s, err := f.Kit.Seal.Seal(ctx, []byte(value), SealAAD(it.AccountID, it.ID))
	if err != nil {
		return err
	}
	it.Value = s
	return nil
}

// SealAAD is the context a secret's value is sealed with: its account and id.
func SealAAD(account, id string) map[string]string { return seal.ResourceContext(account, id) }

// indexPath is the attribute path of the secret name in its vault's index.
func indexPath(name string) expression.NameBuilder {
	return expression.Name(attrSecrets).AppendName(expression.Name(indexKey(name)))
}

func errVaultNotFound(id string) error {
	return api.BadRequest(CodeVaultNotFound, "vault_id", "vault %s does not exist in this account", api.Describe(id))
}

func errNameTaken(vault, name, other string) error {
	if other != "" {
		return api.BadRequest(CodeSecretNameTaken, "name", "vault %s already holds a secret named %s (%s); secret names must be unique in a vault", vault, api.Describe(name), other)
	}
	return api.BadRequest(CodeSecretNameTaken, "name", "vault %s already holds a secret named %s; secret names must be unique in a vault", vault, api.Describe(name))
}

func nowUnix() int64 { return time.Now().Unix() }
