// Package principals holds who can own keys and credentials: accounts, users, bot users and
// service users, owner resolution for new secrets, token issuance, and account bootstrap; and
// the families /api_keys, /credentials, /bot_users and /service_users (SSH credentials, owned
// the same way, are package sshcredentials).
//
// Conventions it implements:
//   - A secret (API key or credential token) is shown once, in the create response; GET, list,
//     PATCH and events show "token": null. Only the token's hash is stored, on the resource and
//     as a token item that authentication reads; deleting the resource deletes the token item in
//     the same transaction, so the token fails on the next request.
//   - owner_id defaults to the caller; only an admin may name another user, bot user or service
//     user of the account (ERR_NGROK_630 otherwise), and that owner must exist when the secret
//     commits.
//   - Bot users and service users are one kind of principal (BotUserItem, with the same hooks)
//     served on two paths, each with its own id prefix, list and event kind: the platform's
//     Terraform provider manages service users through the bot users API, and either id is
//     accepted wherever owner_id is.
//   - Over-long description and metadata of keys and credentials are ERR_NGROK_604 and
//     ERR_NGROK_605; a malformed credential ACL rule is ERR_NGROK_600.
//   - An inactive or deleted bot or service user's keys are refused at once: a request by one
//     reads (or conditions its write on) the bot's own item, which is inactive or gone; a deleted
//     bot's keys stay listed until deleted but never authenticate again.
package principals
