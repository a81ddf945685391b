package config

import (
	"net/netip"
	"strings"
)

// GameSpy4 is [gamespy4]: the GameSpy4 / Minecraft Query responder.
type GameSpy4 struct {
	Enabled   bool   `toml:"enabled"`
	GameType  string `toml:"gametype"`   // gametype; default "SMP" (vanilla; strict clients require it)
	GameID    string `toml:"game_id"`    // game_id; default "MINECRAFT" (vanilla; strict clients require it)
	Plugins   string `toml:"plugins"`    // plugins; default "" (vanilla)
	HostPort  int    `toml:"hostport"`   // hostport when the state has no game_port; 0: the first [listen] udp port
	HostIP    string `toml:"hostip"`     // hostip; "": the IP of the first [listen] udp address
	MaxPacket int    `toml:"max_packet"` // size limit of a reply datagram in bytes, 1024 to 8192; default 1024
}

// Limits of [gamespy4] values (bytes), matching the gamespy4 package's caps.
const (
	gs4MaxGameType = 32
	gs4MaxPlugins  = 256
	gs4MinPacket   = 1024
	gs4MaxPacket   = 8192
)

func defaultGameSpy4() GameSpy4 {
	return GameSpy4{Enabled: true, GameType: "SMP", GameID: "MINECRAFT", MaxPacket: gs4MinPacket}
}

func (c *Config) validateGameSpy4(errs *Errors) {
	g := c.GameSpy4
	gs4Text(errs, "gamespy4.gametype", g.GameType, gs4MaxGameType)
	gs4Text(errs, "gamespy4.game_id", g.GameID, gs4MaxGameType)
	gs4Text(errs, "gamespy4.plugins", g.Plugins, gs4MaxPlugins)
	if g.HostPort < 0 || g.HostPort > 65535 {
		errs.add("gamespy4.hostport", "want 0 to 65535, got %d", g.HostPort)
	}
	if g.HostIP != "" {
		if ip, err := netip.ParseAddr(g.HostIP); err != nil || ip.Zone() != "" {
			errs.add("gamespy4.hostip", "want an IP address such as \"203.0.113.7\" or \"2001:db8::7\" (no zone), or \"\" for the listen address, got %q", g.HostIP)
		}
	}
	if g.MaxPacket < gs4MinPacket || g.MaxPacket > gs4MaxPacket {
		errs.add("gamespy4.max_packet", "want %d to %d bytes, got %d", gs4MinPacket, gs4MaxPacket, g.MaxPacket)
	}
}

// gs4Text checks a string sent in GameSpy4 replies: at most max bytes, no
// control characters (NUL would end the field).
func gs4Text(errs *Errors, key, s string, max int) {
	if len(s) > max {
		errs.add(key, "too long: %d bytes, at most %d", len(s), max)
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7F }) {
		errs.add(key, "contains a control character")
	}
}
