package sqp

import (
	"net/netip"

	"github.com/queryd/queryd/config"
)

// Section is [sqp]: the Unity SQP (Server Query Protocol) responder.
type Section struct {
	// Enabled is false by default: SQP's requests start with 00 or 01, which
	// game traffic may too (see Claims).
	Enabled  bool   `toml:"enabled"`
	GameType string `toml:"game_type"` // ServerInfo game type when the state has no gamemode; default ""
	GamePort int    `toml:"game_port"` // ServerInfo port when the state has no game_port; 0: the first [listen] udp port
}

// NewSection returns [sqp] with its defaults.
func NewSection() *Section { return &Section{} }

// On reports whether SQP is answered.
func (s *Section) On() bool { return s.Enabled }

// Check validates [sqp].
func (s *Section) Check(_ *config.Config, errs *config.Errors) {
	if len(s.GameType) > MaxString {
		errs.Add("sqp.game_type", "too long: %d bytes, at most %d", len(s.GameType), MaxString)
	}
	if s.GamePort < 0 || s.GamePort > 65535 {
		errs.Add("sqp.game_port", "want 0 to 65535, got %d", s.GamePort)
	}
}

// Warnings: SQP in relay mode answers the game's own datagrams that happen
// to have an SQP request's exact shape instead of forwarding them.
func (s *Section) Warnings(c *config.Config) []string {
	if s.Enabled && c.Relay.GameServer != "" {
		return []string{"sqp.enabled: in relay mode, game datagrams of exactly 5 zero bytes, or of 8 bytes starting 01 with 00 01 at bytes 5-6, are answered as SQP instead of forwarded; turn SQP on only if the game never sends such datagrams"}
	}
	return nil
}

// handlerConfig turns [sqp] into the handler's config: the game port falls
// back to the first [listen] udp port.
func (s *Section) handlerConfig(listen []netip.AddrPort) Config {
	port := uint16(s.GamePort)
	if port == 0 && len(listen) > 0 {
		port = listen[0].Port()
	}
	return Config{GameType: s.GameType, GamePort: port}
}

var _ config.Section = (*Section)(nil)
