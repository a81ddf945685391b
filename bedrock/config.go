package bedrock

import (
	"net/netip"
	"strings"

	"github.com/queryd/queryd/config"
)

// Section is [bedrock]: the Minecraft Bedrock status (RakNet unconnected
// ping). Off by default: the ping's first bytes are weak (its magic sits at
// offset 9) and the pong answers a source that proved nothing.
type Section struct {
	Enabled        bool    `toml:"enabled"`
	Edition        string  `toml:"edition"`          // first field of the status; default "MCPE"
	Protocol       int     `toml:"protocol"`         // network protocol number; default DefaultProtocol
	GameMode       string  `toml:"game_mode"`        // game mode when the state has no gamemode; default "Survival"
	GameModeNumber int     `toml:"game_mode_number"` // default 1, as vanilla sends for Survival
	IPv4Port       int     `toml:"ipv4_port"`        // when the state has no game_port; 0: the first [listen] udp port
	IPv6Port       int     `toml:"ipv6_port"`        // 0: the IPv4 port
	PacketRate     float64 `toml:"packet_rate"`      // pings per second per source; 0 turns the limit off
	PacketBurst    int     `toml:"packet_burst"`     // pings one source may send at once
}

// Defaults of [bedrock].
const (
	DefaultEdition        = "MCPE"
	DefaultProtocol       = 766 // Bedrock 1.21.50
	DefaultGameMode       = "Survival"
	DefaultGameModeNumber = 1
)

// Bounds of [bedrock] values.
const (
	maxProtocol       = 1 << 20
	maxGameModeNumber = 255
)

// NewSection returns [bedrock] with its defaults (off).
func NewSection() *Section {
	return &Section{
		Edition: DefaultEdition, Protocol: DefaultProtocol,
		GameMode: DefaultGameMode, GameModeNumber: DefaultGameModeNumber,
		PacketRate: DefaultPacketRate, PacketBurst: DefaultPacketBurst,
	}
}

// On reports whether Bedrock pings are answered.
func (s *Section) On() bool { return s.Enabled }

// Check validates [bedrock].
func (s *Section) Check(_ *config.Config, errs *config.Errors) {
	if s.Edition == "" || len(s.Edition) > CapEdition || !printable(s.Edition) {
		errs.Add("bedrock.edition", "want 1 to %d printable ASCII characters without ';' (\"MCPE\", or \"MCEE\" for Education Edition), got %q", CapEdition, s.Edition)
	}
	if s.Protocol < 1 || s.Protocol > maxProtocol {
		errs.Add("bedrock.protocol", "want 1 to %d, got %d", maxProtocol, s.Protocol)
	}
	if len(s.GameMode) > CapGameMode || strings.ContainsFunc(s.GameMode, isControl) || strings.Contains(s.GameMode, ";") {
		errs.Add("bedrock.game_mode", "want at most %d bytes without ';' or control characters, got %q", CapGameMode, s.GameMode)
	}
	if s.GameModeNumber < 0 || s.GameModeNumber > maxGameModeNumber {
		errs.Add("bedrock.game_mode_number", "want 0 to %d, got %d", maxGameModeNumber, s.GameModeNumber)
	}
	if s.IPv4Port < 0 || s.IPv4Port > 65535 {
		errs.Add("bedrock.ipv4_port", "want 0 to 65535, got %d", s.IPv4Port)
	}
	if s.IPv6Port < 0 || s.IPv6Port > 65535 {
		errs.Add("bedrock.ipv6_port", "want 0 to 65535, got %d", s.IPv6Port)
	}
	if s.PacketRate < 0 || s.PacketRate > 1e6 {
		errs.Add("bedrock.packet_rate", "want 0 (off) to 1000000 pings per second, got %v", s.PacketRate)
	}
	if s.PacketBurst < 1 || s.PacketBurst > 1e6 {
		errs.Add("bedrock.packet_burst", "want 1 to 1000000, got %d", s.PacketBurst)
	}
}

// handlerConfig turns [bedrock] into the handler's config: ipv4_port
// falls back to the first [listen] udp port.
func (s *Section) handlerConfig(listen []netip.AddrPort, guid uint64) Config {
	v4 := uint16(s.IPv4Port)
	if v4 == 0 && len(listen) > 0 {
		v4 = listen[0].Port()
	}
	return Config{
		Edition:        s.Edition,
		Protocol:       s.Protocol,
		GameMode:       s.GameMode,
		GameModeNumber: s.GameModeNumber,
		IPv4Port:       v4,
		IPv6Port:       uint16(s.IPv6Port),
		GUID:           guid,
	}
}

// printable reports whether s is printable ASCII without ';'.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7E || c == ';' {
			return false
		}
	}
	return true
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7F }

var _ config.Section = (*Section)(nil)
