package config

import "fmt"

// A2S is [a2s]: Valve's server queries.
type A2S struct {
	Enabled        bool   `toml:"enabled"`
	AppID          int    `toml:"app_id"`          // A2S_INFO app id; default 480 (see README on qstat)
	GameID         uint64 `toml:"game_id"`         // EDF GameID; 0 leaves it out
	Protocol       int    `toml:"protocol"`        // A2S_INFO protocol byte; default 17
	InfoChallenge  bool   `toml:"info_challenge"`  // A2S_INFO needs a challenge; default true
	Compat         bool   `toml:"compat"`          // answer the steamlogger client's requests; default true
	LegacyRequests bool   `toml:"legacy_requests"` // answer 5-byte A2A_PING / GETCHALLENGE; default false
	GamePort       int    `toml:"game_port"`       // EDF game port when the state has none; 0: the first [listen] udp port
}

func defaultA2S() A2S {
	return A2S{Enabled: true, AppID: 480, Protocol: 17, InfoChallenge: true, Compat: true}
}

func (c *Config) validateA2S(errs *Errors) {
	a := c.A2S
	if a.AppID < 0 || a.AppID > 65535 {
		errs.add("a2s.app_id", "want 0 to 65535, got %d", a.AppID)
	}
	if a.Protocol < 0 || a.Protocol > 255 {
		errs.add("a2s.protocol", "want 0 to 255, got %d", a.Protocol)
	}
	if a.GamePort < 0 || a.GamePort > 65535 {
		errs.add("a2s.game_port", "want 0 to 65535, got %d", a.GamePort)
	}
}

// Warnings lists settings that are valid but likely to hurt, with their keys.
func (c *Config) Warnings() []string {
	var w []string
	if c.A2S.Enabled && c.A2S.AppID&0xFF < 200 {
		w = append(w, fmt.Sprintf("a2s.app_id: %d has a low byte below 200: qstat then reads split A2S replies in the old GoldSrc layout and shows no players or rules", c.A2S.AppID))
	}
	if c.Admin.Listen != "" && !isLoopback(c.Admin.Listen) {
		w = append(w, fmt.Sprintf("admin.listen: %s is not a loopback address: /metrics is reachable from the network", c.Admin.Listen))
	}
	return append(w, c.relayWarnings()...)
}
