// Package ids makes and checks the platform's resource identifiers and secrets.
//
// An id is <prefix>_<KSUID>: the kind's prefix (the platform's own, such as ak for API keys)
// and 27 base62 characters whose first 4 bytes are the creation second, so id order is
// creation order and a resource's created_at equals its id's time. API key and credential
// tokens are <the KSUID of the resource id>_<21 base62 characters>; only their hash is stored.
package ids
