package config

// GameSpy4 is [gamespy4]: the GameSpy4 / Minecraft Query responder.
type GameSpy4 struct {
	Enabled bool `toml:"enabled"`
}

func defaultGameSpy4() GameSpy4 { return GameSpy4{Enabled: true} }

func (c *Config) validateGameSpy4(errs *Errors) {}
