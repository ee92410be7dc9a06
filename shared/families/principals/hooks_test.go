package principals

import (
	"strings"
	"testing"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/hooktest"
)

// The hooks run without a table: these call them directly with hooktest's request.

func apiKeys() APIKeys {
	return APIKeys{secretHooks[APIKeyItem, *APIKeyItem]{&resource.Family[APIKeyItem, *APIKeyItem]{Descriptor: APIKeysDescriptor}}}
}

func credentials() Credentials {
	return Credentials{secretHooks[CredentialItem, *CredentialItem]{&resource.Family[CredentialItem, *CredentialItem]{Descriptor: CredentialsDescriptor}}}
}

func TestAPIKeyRenderHidesToken(t *testing.T) {
	it := &APIKeyItem{SecretBase{Meta: store.Meta{ID: "ak_1"}, Described: resource.Described{Description: "d", Metadata: "m"},
		OwnerID: "usr_1", TokenHash: "h"}}
	hooktest.WantJSON(t, apiKeys().Render(hooktest.Request(""), it),
		`{"id":"ak_1","uri":"https://api.example.com/api_keys/ak_1","description":"d","metadata":"m","created_at":"1970-01-01T00:00:00Z","token":null,"owner_id":"usr_1"}`)
}

func TestAPIKeyUpdateRefusals(t *testing.T) {
	it := &APIKeyItem{SecretBase{Described: resource.Described{Description: "orig"}}}
	hooktest.WantCode(t, apiKeys().Update(t.Context(), hooktest.Request(`{}`), it, nil), api.CodeEmptyUpdate, "body")
	hooktest.WantCode(t, apiKeys().Update(t.Context(), hooktest.Request(`{"description":"`+strings.Repeat("x", 256)+`"}`), it, nil), "ERR_NGROK_604", "description")
	hooktest.WantCode(t, apiKeys().Update(t.Context(), hooktest.Request(`{"owner_id":"usr_1"}`), it, nil), api.CodeUnknownField, "owner_id")
	if it.Description != "orig" {
		t.Fatalf("refused update changed the description to %q", it.Description)
	}
	if err := apiKeys().Update(t.Context(), hooktest.Request(`{"metadata":"m"}`), it, nil); err != nil || it.Metadata != "m" || it.Description != "orig" {
		t.Fatalf("update: %v, item %+v", err, it.Described)
	}
}

func TestCredentialRenderAndUpdate(t *testing.T) {
	it := &CredentialItem{SecretBase: SecretBase{Meta: store.Meta{ID: "cr_1"}, OwnerID: "bot_1"}}
	hooktest.WantJSON(t, credentials().Render(hooktest.Request(""), it),
		`{"id":"cr_1","uri":"https://api.example.com/credentials/cr_1","created_at":"1970-01-01T00:00:00Z","token":null,"acl":[],"owner_id":"bot_1"}`)
	f := credentials()
	hooktest.WantCode(t, f.Update(t.Context(), hooktest.Request(`{}`), it, nil), api.CodeEmptyUpdate, "body")
	hooktest.WantCode(t, f.Update(t.Context(), hooktest.Request(`{"acl":["bind:a b"],"description":"x"}`), it, nil), CodeInvalidACL, "acl")
	hooktest.WantCode(t, f.Update(t.Context(), hooktest.Request(`{"metadata":"`+strings.Repeat("x", 4097)+`"}`), it, nil), "ERR_NGROK_605", "metadata")
	if it.Description != "" || it.ACL != nil {
		t.Fatalf("refused update changed the item: %+v", it)
	}
	if err := f.Update(t.Context(), hooktest.Request(`{"acl":["bind:x.example.com"]}`), it, nil); err != nil || len(it.ACL) != 1 {
		t.Fatalf("update: %v, acl %v", err, it.ACL)
	}
}

func TestBotUserHooks(t *testing.T) {
	f := resource.HooksOf[BotUsers](BotUsersDescriptor, nil)
	b := &BotUserItem{Meta: store.Meta{ID: "bot_1"}, Name: "ci", Active: true}
	hooktest.WantJSON(t, f.Render(hooktest.Request(""), b),
		`{"id":"bot_1","uri":"https://api.example.com/bot_users/bot_1","name":"ci","active":true,"created_at":"1970-01-01T00:00:00Z"}`)
	// Refusals come before anything is added to the mutation, so none is needed here.
	if _, err := f.Create(t.Context(), hooktest.Request(`{}`), &BotUserItem{}, nil); err == nil {
		t.Fatal("create without a name accepted")
	} else {
		hooktest.WantCode(t, err, api.CodeBadFieldValue, "name")
	}
	hooktest.WantCode(t, f.Update(t.Context(), hooktest.Request(`{}`), b, nil), api.CodeEmptyUpdate, "body")
	hooktest.WantCode(t, f.Update(t.Context(), hooktest.Request(`{"name":""}`), b, nil), api.CodeBadFieldValue, "name")
	hooktest.WantCode(t, f.Update(t.Context(), hooktest.Request(`{"name":"`+strings.Repeat("n", 256)+`"}`), b, nil), api.CodeBadFieldValue, "name")
	if err := f.Update(t.Context(), hooktest.Request(`{"name":"deploy"}`), b, nil); err != nil || b.Name != "deploy" {
		t.Fatalf("rename: %v, name %q", err, b.Name)
	}
}
