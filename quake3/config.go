package quake3

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/queryd/queryd/config"
)

// Section is [quake3]: getinfo / getstatus and master heartbeats.
type Section struct {
	Enabled     bool    `toml:"enabled"`
	GameName    string  `toml:"gamename"`     // "gamename"; "" uses the state's folder, else "queryd"
	Protocol    int     `toml:"protocol"`     // "protocol"; default DefaultProtocol (Quake III 1.32; ioquake3 71, ET 84)
	GameType    int     `toml:"gametype"`     // "gametype" unless the state's rules set g_gametype
	PacketRate  float64 `toml:"packet_rate"`  // getinfo/getstatus per second per IP; 0 turns the limit off
	PacketBurst int     `toml:"packet_burst"` // requests one IP may send at once
	// PassRate and PassBurst bound what relay mode passes to the game
	// server of the requests ioquake3 answers from its one global bucket
	// (getchallenge, and getinfo/getstatus with [quake3] off), all sources
	// together; PassSourceRate and PassSourceBurst per source. 0 turns a
	// rate off. See Module.PassLimit.
	PassRate        float64 `toml:"pass_rate"`
	PassBurst       int     `toml:"pass_burst"`
	PassSourceRate  float64 `toml:"pass_source_rate"`
	PassSourceBurst int     `toml:"pass_source_burst"`
	// QueryPortIsJoinPort says players join the game at queryd's own UDP
	// address, which is what heartbeats make masters list. Without relay mode
	// it is the operator's promise that lets masters be configured.
	QueryPortIsJoinPort bool              `toml:"query_port_is_join_port"`
	Info                map[string]string `toml:"info"` // extra keys in infoResponse and statusResponse
	Masters             []Master          `toml:"masters"`
}

// Master is one [[quake3.masters]] entry.
type Master struct {
	Address   string `toml:"address"`   // "host:port", resolved on every heartbeat
	Heartbeat string `toml:"heartbeat"` // protocol string: "DarkPlaces", "QuakeArena-1", "EnemyTerritory-1"
	Flatline  string `toml:"flatline"`  // optional, sent on shutdown and when the feed goes stale: "ETFlatline-1"
}

// Defaults and bounds of [quake3].
const (
	maxMasters  = 16
	maxInfoKeys = 32
	maxName     = 64
	maxValue    = 256
	maxPass     = 1000
)

// NewSection returns [quake3] with its defaults.
func NewSection() *Section {
	return &Section{Enabled: true, Protocol: DefaultProtocol, PacketRate: DefaultPacketRate, PacketBurst: DefaultPacketBurst,
		PassRate: DefaultPassRate, PassBurst: DefaultPassBurst, PassSourceRate: DefaultPassSourceRate, PassSourceBurst: DefaultPassSourceBurst}
}

// On reports whether Quake 3 is answered.
func (s *Section) On() bool { return s.Enabled }

// InfoKeys returns [quake3.info] as key/value pairs sorted by key.
func (s *Section) InfoKeys() []KeyValue {
	out := make([]KeyValue, 0, len(s.Info))
	for k, v := range s.Info {
		out = append(out, KeyValue{Key: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Check validates [quake3] and its masters (which need relay mode or
// query_port_is_join_port).
func (s *Section) Check(c *config.Config, errs *config.Errors) {
	if s.GameName != "" {
		if err := checkToken(s.GameName); err != nil {
			errs.Add("quake3.gamename", "%v (dpmaster refuses spaces in gamename)", err)
		}
	}
	if s.Protocol < 1 || s.Protocol > 1<<20 {
		errs.Add("quake3.protocol", "want 1 to 1048576, got %d", s.Protocol)
	}
	if s.GameType < 0 || s.GameType > 1000 {
		errs.Add("quake3.gametype", "want 0 to 1000, got %d", s.GameType)
	}
	if s.PacketRate < 0 || s.PacketRate > 1e6 {
		errs.Add("quake3.packet_rate", "want 0 (off) to 1000000 requests per second, got %v", s.PacketRate)
	}
	if s.PacketBurst < 1 || s.PacketBurst > 1e6 {
		errs.Add("quake3.packet_burst", "want 1 to 1000000, got %d", s.PacketBurst)
	}
	for _, r := range []struct {
		key string
		v   float64
	}{{"quake3.pass_rate", s.PassRate}, {"quake3.pass_source_rate", s.PassSourceRate}} {
		if r.v < 0 || r.v > maxPass || r.v != r.v {
			errs.Add(r.key, "want 0 (off) to %d datagrams per second, got %v", maxPass, r.v)
		}
	}
	for _, b := range []struct {
		key string
		v   int
	}{{"quake3.pass_burst", s.PassBurst}, {"quake3.pass_source_burst", s.PassSourceBurst}} {
		if b.v < 1 || b.v > maxPass {
			errs.Add(b.key, "want 1 to %d, got %d", maxPass, b.v)
		}
	}
	s.checkInfo(errs)
	s.checkMasters(c, errs)
}

func (s *Section) checkInfo(errs *config.Errors) {
	if len(s.Info) > maxInfoKeys {
		errs.Add("quake3.info", "at most %d keys, got %d", maxInfoKeys, len(s.Info))
	}
	for k, v := range s.Info {
		key := "quake3.info." + k
		if err := checkToken(k); err != nil {
			errs.Add(key, "key: %v", err)
		}
		for _, r := range reserved {
			if strings.EqualFold(k, r) {
				errs.Add(key, "queryd sets %q itself (from the state and the [quake3] keys)", r)
			}
		}
		if len(v) > maxValue || strings.ContainsAny(v, "\\;\"") || strings.ContainsFunc(v, isControl) {
			errs.Add(key, "want at most %d bytes without \\ ; \" or control characters, got %q", maxValue, v)
		}
	}
}

func (s *Section) checkMasters(c *config.Config, errs *config.Errors) {
	ms := s.Masters
	if len(ms) > maxMasters {
		errs.Add("quake3.masters", "at most %d masters, got %d", maxMasters, len(ms))
	}
	for i, m := range ms {
		key := fmt.Sprintf("quake3.masters[%d]", i)
		if err := config.CheckHostPort(m.Address); err != nil {
			errs.Add(key+".address", "%v", err)
		}
		if err := checkToken(m.Heartbeat); err != nil {
			errs.Add(key+".heartbeat", "%v; e.g. \"DarkPlaces\", \"QuakeArena-1\" or \"EnemyTerritory-1\"", err)
		}
		if m.Flatline != "" {
			if err := checkToken(m.Flatline); err != nil {
				errs.Add(key+".flatline", "%v; e.g. \"ETFlatline-1\", or leave it out", err)
			}
		}
	}
	if len(ms) == 0 {
		return
	}
	relay := c.Relay.GameServer != ""
	if !relay && !s.QueryPortIsJoinPort {
		errs.Add("quake3.masters", "a master lists the address its heartbeats come from, which is queryd's UDP "+
			"address, and players browsing it would try to join the game there; without relay mode nothing there "+
			"lets them in. Set [relay] upstream to the game server so queryd forwards the game traffic, or set "+
			"quake3.query_port_is_join_port = true if players really join at queryd's address")
	}
	if !s.Enabled && !relay {
		errs.Add("quake3.enabled", "masters answer a heartbeat with getinfo to the heartbeat's source; with [quake3] "+
			"off and no relay nothing answers it")
	}
	if sl := c.Section("sleep"); !s.Enabled && relay && sl != nil && sl.On() {
		errs.Add("quake3.enabled", "with [sleep] the game server is stopped while it sleeps, and nobody would answer "+
			"the masters' getinfo (with [quake3] off they go to the game server): set enabled = true so queryd "+
			"answers them and the masters keep listing the sleeping server")
	}
}

// RestartKeys says [[quake3.masters]] take effect on restart (the
// heartbeat service starts once).
func (s *Section) RestartKeys(old config.Section) []string {
	o, ok := old.(*Section)
	if !ok || !slices.Equal(o.Masters, s.Masters) {
		return []string{"quake3.masters"}
	}
	return nil
}

// checkToken accepts 1-64 printable ASCII characters without spaces, \ ; or ".
func checkToken(s string) error {
	if s == "" || len(s) > maxName {
		return fmt.Errorf("want 1 to %d characters, got %q", maxName, s)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 33 || c > 126 || c == '\\' || c == ';' || c == '"' {
			return fmt.Errorf("want printable ASCII without spaces, \\ ; or \", got %q", s)
		}
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7F }

var (
	_ config.Section   = (*Section)(nil)
	_ config.Restarter = (*Section)(nil)
)
