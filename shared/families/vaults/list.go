package vaults

import (
	"context"
	"slices"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
)

// listSecrets answers GET /vaults/{id}/secrets: the vault's secrets, newest first, paged like
// every list. The vault's index names them, so a page is two reads whatever the account holds:
// the vault (with the caller's items), then the page's secrets.
func (f Vaults) listSecrets(ctx context.Context, r *api.Request) (_ any, err error) {
	defer derrors.Wrap(&err, "vaults.listSecrets(%s)", r.PathValue("id"))
	p, err := api.ParsePage(r, ids.Secret, false)
	if err != nil {
		return nil, err
	}
	var v VaultItem
	if err := f.Kit.Get(ctx, r, ids.Vault, r.PathValue("id"), &v); err != nil {
		return nil, err
	}
	all := make([]string, 0, len(v.Secrets))
	for _, id := range v.Secrets {
		if p.BeforeID == "" || id < p.BeforeID {
			all = append(all, id)
		}
	}
	slices.Sort(all)
	slices.Reverse(all)
	more := len(all) > p.Limit
	page := all[:min(len(all), p.Limit)]
	keys := make([]store.Key, len(page))
	for i, id := range page {
		keys[i] = store.ResourceKey(v.AccountID, id)
	}
	out := make([]any, 0, len(page))
	last := ""
	if len(keys) > 0 {
		items, err := f.Kit.DB.GetMany(ctx, keys...)
		if err != nil {
			return nil, err
		}
		for i, raw := range items {
			last = page[i]
			if raw == nil {
				continue // deleted since the vault was read
			}
			var s SecretItem
			if err := store.Unmarshal(raw, &s); err != nil {
				return nil, err
			}
			out = append(out, renderSecret(r, &s))
		}
	}
	path := f.Path + "/" + v.ID + "/secrets"
	return api.List{Key: "secrets", Items: out, URI: r.URI(path), NextPage: api.NextPageURI(r, path, p, last, more)}, nil
}
