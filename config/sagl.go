package config

// SAGL is [sagl]: the SAGL query (UDP and optional HTTP).
type SAGL struct {
	Enabled bool   `toml:"enabled"`
	HTTP    string `toml:"http"` // "127.0.0.1:8080" serves the JSON over HTTP; "" turns it off
	Logo    string `toml:"logo"` // PNG or JPEG file
}

func defaultSAGL() SAGL { return SAGL{Enabled: true} }

func (c *Config) validateSAGL(errs *Errors) {}
