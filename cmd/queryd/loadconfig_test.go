package main

import "github.com/queryd/queryd/config"

// loadConfig reads one config file as a single server (the daemon's
// Options.Config form), or the embedded demo config.
func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		return config.Parse(config.Default, configModules()...)
	}
	return config.Load(path, configModules()...)
}
