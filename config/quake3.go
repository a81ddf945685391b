package config

// Quake3 is [quake3]: getinfo / getstatus and master heartbeats.
type Quake3 struct {
	Enabled bool     `toml:"enabled"`
	Masters []Master `toml:"masters"`
}

// Master is one [[quake3.masters]] entry.
type Master struct {
	Address   string `toml:"address"`
	Heartbeat string `toml:"heartbeat"`
	Flatline  string `toml:"flatline"`
}

// Relay is [relay]: own the public game port and forward what no responder claims.
type Relay struct {
	Upstream string `toml:"upstream"`
}

func defaultQuake3() Quake3 { return Quake3{Enabled: true} }

func (c *Config) validateQuake3(errs *Errors) {}
