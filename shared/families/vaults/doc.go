// Package vaults is the vault and secret families: /vaults, /vault_secrets, and
// /vaults/{id}/secrets, the secrets of one vault.
//
// A secret's value is write-only: it is sealed (the kit's sealer, bound to the account and the
// secret's id) before it is stored, and no response, event or log line carries it. Traffic
// policies read secrets at run time with secrets.get(vault_name, secret_name).
//
// Names: a vault's is unique in its account (ERR_NGROK_23004), a secret's in its vault
// (24005), both decided in the create's or rename's transaction. A vault's name is held by a
// guard item; a vault indexes its secrets (name → id) on its own item, and every secret create,
// rename and delete writes that index, conditioned on the name being free. So the index also
// says, in the vault delete's transaction, whether the vault still holds secrets: a vault is
// deleted only empty (23003), and a secret created at the same moment either commits first (the
// delete, conditioned on the vault's version, is read again and refused) or finds the vault
// gone (24006). A secret also keeps its vault's name (vault_name), which a vault rename updates
// on every secret of the vault in the rename's transaction; that bounds a vault's secrets to
// MaxSecretsPerVault (24007).
//
// A secret names its vault by vault_id or vault_name; the vault (and the guard of a name) is
// taken from what the process knows of it, asserted by the create's transaction
// (resource.Facts), so that a create in a warm process is one DynamoDB call.
//
// The error codes (23000–23004, 24000–24009) are the platform's, from its public error
// reference; the OpenAPI description does not list them.
//
// created_by and last_updated_by are the principal (usr_… or bot_…) whose key made the
// change: a string on a vault, a reference on a secret, as the platform shows them.
package vaults
