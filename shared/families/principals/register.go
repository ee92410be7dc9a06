package principals

import (
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/resource"
)

// RegisterAPIKeys adds the /api_keys routes.
func RegisterAPIKeys(k *resource.Kit, mux api.Mux, s *api.Server) { APIKeys(k).Register(mux, s) }

// RegisterCredentials adds the /credentials routes.
func RegisterCredentials(k *resource.Kit, mux api.Mux, s *api.Server) {
	Credentials(k).Register(mux, s)
}

// RegisterBotUsers adds the /bot_users routes.
func RegisterBotUsers(k *resource.Kit, mux api.Mux, s *api.Server) { BotUsers(k).Register(mux, s) }
