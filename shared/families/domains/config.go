package domains

import (
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// Config is what a deployment says about its domains and addresses: its settings (package
// config, parsed and checked at start) and what the families derive from them. The families
// take it from their Kit (ConfigOf); tests build their own.
type Config struct {
	config.Domains
}

// Pool is the addresses of one region: every port of Low..High on every host.
type Pool = config.Pool

// ConfigOf is the configuration of the families on k (the zero Config for a nil k, which only
// lists routes). A family that calls it names config.DomainSettings in its descriptor's Reads:
// without it the function never parsed them, and ConfigOf panics as the family's routes are
// registered, at the function's start (the app tests start every function as its main does).
func ConfigOf(k *resource.Kit) *Config {
	if k == nil {
		return &Config{}
	}
	if k.Settings.Domains == nil {
		panic("domains: the settings were not parsed: the family's descriptor must name config.DomainSettings in Reads")
	}
	return &Config{*k.Settings.Domains}
}

// DefaultRegion is the region of a reservation that names none.
func (c *Config) DefaultRegion() string { return c.Regions[0] }

// configuredHooks is the shape of a hooks type that holds its family and the configuration
// (struct{ *resource.Family[T, P]; Config *Config }).
type configuredHooks[T any, P interface {
	*T
	store.Resource
}] interface {
	~struct {
		*resource.Family[T, P]
		Config *Config
	}
	resource.Hooks[P]
}

// configured is the hooks constructor (resource.Bind) of a family whose hooks H hold the
// configuration as well as their family.
func configured[H configuredHooks[T, P], T any, P interface {
	*T
	store.Resource
}](f *resource.Family[T, P]) H {
	return H(struct {
		*resource.Family[T, P]
		Config *Config
	}{f, ConfigOf(f.Kit)})
}
