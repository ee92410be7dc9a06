package domains

import (
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/resource"
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
