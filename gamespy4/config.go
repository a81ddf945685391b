package gamespy4

import (
	"net/netip"
	"strings"

	"github.com/queryd/queryd/config"
)

// Section is [gamespy4]: the GameSpy4 / Minecraft Query responder.
type Section struct {
	Enabled   bool       `toml:"enabled"`
	GameType  string     `toml:"gametype"`   // gametype; default "SMP" (vanilla; strict clients require it)
	GameID    string     `toml:"game_id"`    // game_id; default "MINECRAFT" (vanilla; strict clients require it)
	Plugins   string     `toml:"plugins"`    // plugins; default "" (vanilla)
	HostPort  int        `toml:"hostport"`   // hostport when the state has no game_port; 0: the first [listen] udp port
	HostIP    netip.Addr `toml:"hostip"`     // hostip; "": the IP of the first [listen] udp address
	MaxPacket int        `toml:"max_packet"` // size limit of a reply datagram in bytes; default MinPacket
}

// Bounds of [gamespy4] values (bytes).
const (
	maxGameType = 32
	maxPlugins  = 256
)

// NewSection returns [gamespy4] with its defaults.
func NewSection() *Section {
	return &Section{Enabled: true, GameType: "SMP", GameID: "MINECRAFT", MaxPacket: MinPacket}
}

// On reports whether GameSpy4 is answered.
func (s *Section) On() bool { return s.Enabled }

// Check validates [gamespy4].
func (s *Section) Check(_ *config.Config, errs *config.Errors) {
	checkText(errs, "gamespy4.gametype", s.GameType, maxGameType)
	checkText(errs, "gamespy4.game_id", s.GameID, maxGameType)
	checkText(errs, "gamespy4.plugins", s.Plugins, maxPlugins)
	if s.HostPort < 0 || s.HostPort > 65535 {
		errs.Add("gamespy4.hostport", "want 0 to 65535, got %d", s.HostPort)
	}
	if s.HostIP.Zone() != "" {
		errs.Add("gamespy4.hostip", "want an IP address without a zone, got %q", s.HostIP)
	}
	if s.MaxPacket < MinPacket || s.MaxPacket > MaxPacket {
		errs.Add("gamespy4.max_packet", "want %d to %d bytes, got %d", MinPacket, MaxPacket, s.MaxPacket)
	}
}

// checkText checks a string sent in GameSpy4 replies: at most max bytes, no
// control characters (NUL would end the field).
func checkText(errs *config.Errors, key, s string, max int) {
	if len(s) > max {
		errs.Add(key, "too long: %d bytes, at most %d", len(s), max)
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7F }) {
		errs.Add(key, "contains a control character")
	}
}

// handlerConfig turns [gamespy4] into the handler's config: hostport falls
// back to the first [listen] udp port, hostip to that address's IP.
func (s *Section) handlerConfig(listen []netip.AddrPort) Config {
	port := uint16(s.HostPort)
	ip := s.HostIP
	if len(listen) > 0 {
		if port == 0 {
			port = listen[0].Port()
		}
		if !ip.IsValid() {
			ip = listen[0].Addr().Unmap()
		}
	}
	hostIP := ""
	if ip.IsValid() {
		hostIP = ip.String()
	}
	return Config{
		GameType:  s.GameType,
		GameID:    s.GameID,
		Plugins:   s.Plugins,
		HostPort:  port,
		HostIP:    hostIP,
		MaxPacket: s.MaxPacket,
	}
}

var _ config.Section = (*Section)(nil)
