package config

// Module is what the config needs of a protocol module: the name of its
// table ([a2s], [sagl], …) and a section holding its defaults. The daemon
// and `queryd check` pass the registered modules to Parse and Load.
type Module interface {
	Name() string
	NewSection() Section
}

// Section is a module's config table: a pointer to a struct whose fields
// carry `toml` tags. Parse decodes the table over the defaults NewSection
// set, key by key, then calls Check.
type Section interface {
	// On reports whether the protocol answers ([name] enabled).
	On() bool
	// Check validates the section (errors keyed "name.key") with the rest
	// of the config in c (listen addresses, relay mode).
	Check(c *Config, errs *Errors)
}

// Warner is a Section with settings that are valid but likely to hurt.
type Warner interface {
	Warnings(c *Config) []string
}

// Restarter is a Section some of whose keys take effect only on restart
// (they configure a listener or a service started once).
type Restarter interface {
	// RestartKeys returns the keys whose value differs from old's.
	RestartKeys(old Section) []string
}

// DescriptorUser is a Section whose service holds descriptors outsiders
// open (connections): the daemon sizes its cap to the descriptor limit.
type DescriptorUser interface {
	// Descriptors returns the cap's key ("sagl.http_max_conns") and value
	// (0 when the service is off).
	Descriptors() (key string, n int)
	// LimitDescriptors lowers the cap to n.
	LimitDescriptors(n int)
}

// NamedSection is one module's section under its table's name.
type NamedSection struct {
	Name    string
	Section Section
}

// Section returns the section of the module named name, or nil.
func (c *Config) Section(name string) Section {
	for _, s := range c.Modules {
		if s.Name == name {
			return s.Section
		}
	}
	return nil
}
