package vaults

import (
	"encoding/base64"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// Error codes of vaults and secrets.
const (
	CodeVaultNameInvalid  = "ERR_NGROK_23000"
	CodeVaultNameEmpty    = "ERR_NGROK_23001"
	CodeVaultNameTooLong  = "ERR_NGROK_23002"
	CodeVaultNotEmpty     = "ERR_NGROK_23003"
	CodeVaultNameTaken    = "ERR_NGROK_23004"
	CodeSecretNameInvalid = "ERR_NGROK_24000"
	CodeSecretNameEmpty   = "ERR_NGROK_24001"
	CodeSecretNameTooLong = "ERR_NGROK_24002"
	CodeSecretValueEmpty  = "ERR_NGROK_24003"
	CodeSecretValueLong   = "ERR_NGROK_24004"
	CodeSecretNameTaken   = "ERR_NGROK_24005"
	CodeVaultNotFound     = "ERR_NGROK_24006"
	CodeVaultFull         = "ERR_NGROK_24007"
	CodeVaultRequired     = "ERR_NGROK_24008"
	CodeVaultNameNotFound = "ERR_NGROK_24009"
)

// Limits.
const (
	// MaxNameBytes bounds vault and secret names.
	MaxNameBytes = 128
	// MaxValueBytes bounds a secret's value.
	MaxValueBytes = 16 << 10
	// MaxSecretsPerVault is what a vault rename can update in its one transaction: DynamoDB's
	// 100 writes less the vault, its two name guards, its audit event (2) and the auth guard
	// (2), with room to spare.
	MaxSecretsPerVault = 90
)

var textCodes = api.TextCodes{Description: api.CodeBadFieldValue, Metadata: api.CodeBadFieldValue}

// nameCodes are the codes of one kind of name: vault or secret.
type nameCodes struct{ empty, invalid, long string }

var (
	vaultName  = nameCodes{CodeVaultNameEmpty, CodeVaultNameInvalid, CodeVaultNameTooLong}
	secretName = nameCodes{CodeSecretNameEmpty, CodeSecretNameInvalid, CodeSecretNameTooLong}
)

// check refuses a name that is empty, too long or holds a character other than letters,
// digits, '_', '/', '.' and '-' (the platform's set; its own examples use '-').
func (c nameCodes) check(field, name string) error {
	if name == "" {
		return api.BadRequest(c.empty, field, "%s must not be empty", field)
	}
	if len(name) > MaxNameBytes {
		return api.BadRequest(c.long, field, "%s is %d bytes long; the limit is %d", field, len(name), MaxNameBytes)
	}
	for _, ch := range []byte(name) {
		if !nameByte(ch) {
			return api.BadRequest(c.invalid, field, "%s %s may hold only letters, digits and the characters _ / . -", field, api.Describe(name))
		}
	}
	return nil
}

// renamed returns the name a PATCH supplies, checked, when it differs from current.
func (c nameCodes) renamed(current string, in *string) (string, bool, error) {
	if in == nil || *in == current {
		return "", false, nil
	}
	return *in, true, c.check("name", *in)
}

func nameByte(ch byte) bool {
	return ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' ||
		ch == '_' || ch == '/' || ch == '.' || ch == '-'
}

// indexKey is a secret name as a key of its vault's index: the expression builder splits
// attribute paths on dots, so the name is encoded.
func indexKey(name string) string { return base64.RawURLEncoding.EncodeToString([]byte(name)) }

// principalRef is the reference to the principal id (a user or a bot user).
func principalRef(r *api.Request, id string) api.Ref {
	path := "/users/"
	if ids.Is(id, ids.BotUser) {
		path = "/bot_users/"
	}
	return api.Ref{ID: id, URI: r.URI(path + id)}
}

// NamedHead opens the wire form of vaults and secrets: resource.Head's members with updated_at
// and the name before the text, in the platform's order.
type NamedHead struct {
	ID        string `json:"id"`
	URI       string `json:"uri"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
	Name      string `json:"name"`
	resource.DescribedJSON
}

// namedHead is the wire head of a vault or secret at uri.
func namedHead(uri string, m store.Meta, t resource.Described, name string, updatedAt int64) NamedHead {
	return NamedHead{ID: m.ID, URI: uri, CreatedAt: api.Timestamp(m.CreatedAt), UpdatedAt: api.Timestamp(updatedAt),
		Name: name, DescribedJSON: t.Rendered()}
}
