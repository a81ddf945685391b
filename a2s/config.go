package a2s

import (
	"fmt"

	"github.com/queryd/queryd/config"
)

// Section is [a2s]: Valve's server queries.
type Section struct {
	Enabled        bool   `toml:"enabled"`
	AppID          int    `toml:"app_id"`          // A2S_INFO app id; default DefaultAppID (see doc.go on qstat)
	GameID         uint64 `toml:"game_id"`         // EDF GameID; 0 leaves it out
	Protocol       int    `toml:"protocol"`        // A2S_INFO protocol byte; default DefaultProtocol
	InfoChallenge  bool   `toml:"info_challenge"`  // A2S_INFO needs a challenge; default true
	Compat         bool   `toml:"compat"`          // answer the steamlogger client's requests; default true
	LegacyRequests bool   `toml:"legacy_requests"` // answer 5-byte A2A_PING / GETCHALLENGE; default false
	GamePort       int    `toml:"game_port"`       // EDF game port when the state has none; 0: the first [listen] udp port
}

// NewSection returns [a2s] with its defaults.
func NewSection() *Section {
	return &Section{Enabled: true, AppID: DefaultAppID, Protocol: DefaultProtocol, InfoChallenge: true, Compat: true}
}

// On reports whether A2S is answered.
func (s *Section) On() bool { return s.Enabled }

// Check validates [a2s].
func (s *Section) Check(_ *config.Config, errs *config.Errors) {
	switch {
	case s.AppID > 65535:
		// Steam app ids passed 65535 around 2015: most are larger now.
		errs.Add("a2s.app_id", "want 0 to 65535, got %d: A2S_INFO's app id field holds 16 bits; "+
			"set game_id = %d instead (the 64-bit game id, whose low 24 bits clients read as the full app id) "+
			"and leave app_id at a value that fits", s.AppID, s.AppID)
	case s.AppID < 0:
		errs.Add("a2s.app_id", "want 0 to 65535, got %d", s.AppID)
	}
	if s.Protocol < 0 || s.Protocol > 255 {
		errs.Add("a2s.protocol", "want 0 to 255, got %d", s.Protocol)
	}
	if s.GamePort < 0 || s.GamePort > 65535 {
		errs.Add("a2s.game_port", "want 0 to 65535, got %d", s.GamePort)
	}
}

// Warnings warns of an app id whose low byte makes qstat misread splits.
func (s *Section) Warnings(*config.Config) []string {
	if s.Enabled && s.AppID&0xFF < 200 {
		return []string{fmt.Sprintf("a2s.app_id: %d has a low byte below 200: qstat then reads split A2S replies in the old GoldSrc layout and shows no players or rules", s.AppID)}
	}
	return nil
}

var (
	_ config.Section = (*Section)(nil)
	_ config.Warner  = (*Section)(nil)
)
