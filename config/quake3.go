package config

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
)

// Quake3 is [quake3]: getinfo / getstatus and master heartbeats.
type Quake3 struct {
	Enabled     bool    `toml:"enabled"`
	GameName    string  `toml:"gamename"`     // "gamename"; "" uses the state's folder, else "queryd"
	Protocol    int     `toml:"protocol"`     // "protocol"; default 68 (Quake III 1.32; ioquake3 71, ET 84)
	GameType    int     `toml:"gametype"`     // "gametype" unless the state's rules set g_gametype
	PacketRate  float64 `toml:"packet_rate"`  // getinfo/getstatus per second per IP; 0 turns the limit off
	PacketBurst int     `toml:"packet_burst"` // requests one IP may send at once
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

// Bounds of [quake3].
const (
	quake3MaxMasters  = 16
	quake3MaxInfoKeys = 32
	quake3MaxName     = 64
	quake3MaxValue    = 256
)

// quake3Reserved are the info keys queryd sets itself; [quake3.info] cannot
// name them.
var quake3Reserved = []string{
	"challenge", "clients", "g_gametype", "g_humanplayers", "g_needpass", "gamename",
	"gametype", "hostname", "mapname", "protocol", "sv_hostname", "sv_maxclients", "version",
}

func defaultQuake3() Quake3 {
	return Quake3{Enabled: true, Protocol: 68, PacketRate: 1, PacketBurst: 10}
}

// InfoKeys returns [quake3.info] as key/value pairs sorted by key.
func (q Quake3) InfoKeys() [][2]string {
	out := make([][2]string, 0, len(q.Info))
	for k, v := range q.Info {
		out = append(out, [2]string{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

func (c *Config) validateQuake3(errs *Errors) {
	q := c.Quake3
	if q.GameName != "" {
		if err := checkToken(q.GameName); err != nil {
			errs.add("quake3.gamename", "%v (dpmaster refuses spaces in gamename)", err)
		}
	}
	if q.Protocol < 1 || q.Protocol > 1<<20 {
		errs.add("quake3.protocol", "want 1 to 1048576, got %d", q.Protocol)
	}
	if q.GameType < 0 || q.GameType > 1000 {
		errs.add("quake3.gametype", "want 0 to 1000, got %d", q.GameType)
	}
	if q.PacketRate < 0 || q.PacketRate > 1e6 {
		errs.add("quake3.packet_rate", "want 0 (off) to 1000000 requests per second, got %v", q.PacketRate)
	}
	if q.PacketBurst < 1 || q.PacketBurst > 1e6 {
		errs.add("quake3.packet_burst", "want 1 to 1000000, got %d", q.PacketBurst)
	}
	c.validateQuake3Info(errs)
	c.validateMasters(errs)
	c.validateRelay(errs)
}

func (c *Config) validateQuake3Info(errs *Errors) {
	info := c.Quake3.Info
	if len(info) > quake3MaxInfoKeys {
		errs.add("quake3.info", "at most %d keys, got %d", quake3MaxInfoKeys, len(info))
	}
	for k, v := range info {
		key := "quake3.info." + k
		if err := checkToken(k); err != nil {
			errs.add(key, "key: %v", err)
		}
		for _, r := range quake3Reserved {
			if strings.EqualFold(k, r) {
				errs.add(key, "queryd sets %q itself (from the state and the [quake3] keys)", r)
			}
		}
		if len(v) > quake3MaxValue || strings.ContainsAny(v, "\\;\"") || strings.ContainsFunc(v, isControl) {
			errs.add(key, "want at most %d bytes without \\ ; \" or control characters, got %q", quake3MaxValue, v)
		}
	}
}

func (c *Config) validateMasters(errs *Errors) {
	ms := c.Quake3.Masters
	if len(ms) > quake3MaxMasters {
		errs.add("quake3.masters", "at most %d masters, got %d", quake3MaxMasters, len(ms))
	}
	for i, m := range ms {
		key := fmt.Sprintf("quake3.masters[%d]", i)
		if err := checkHostPort(m.Address); err != nil {
			errs.add(key+".address", "%v", err)
		}
		if err := checkToken(m.Heartbeat); err != nil {
			errs.add(key+".heartbeat", "%v; e.g. \"DarkPlaces\", \"QuakeArena-1\" or \"EnemyTerritory-1\"", err)
		}
		if m.Flatline != "" {
			if err := checkToken(m.Flatline); err != nil {
				errs.add(key+".flatline", "%v; e.g. \"ETFlatline-1\", or leave it out", err)
			}
		}
	}
	if len(ms) == 0 {
		return
	}
	if c.Relay.Upstream == "" && !c.Quake3.QueryPortIsJoinPort {
		errs.add("quake3.masters", "a master lists the address its heartbeats come from, which is queryd's UDP "+
			"address, and players browsing it would try to join the game there; without relay mode nothing there "+
			"lets them in. Set [relay] upstream to the game server so queryd forwards the game traffic, or set "+
			"quake3.query_port_is_join_port = true if players really join at queryd's address")
	}
	if !c.Quake3.Enabled && c.Relay.Upstream == "" {
		errs.add("quake3.enabled", "masters answer a heartbeat with getinfo to the heartbeat's source; with [quake3] "+
			"off and no relay nothing answers it")
	}
}

// checkHostPort accepts "host:port" with a non-empty host and a port 1-65535.
func checkHostPort(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return fmt.Errorf("want HOST:PORT such as \"master.example.org:27950\" or \"127.0.0.1:27961\", got %q", s)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("want a port from 1 to 65535, got %q", port)
	}
	return nil
}

// checkToken accepts 1-64 printable ASCII characters without spaces, \ ; or ".
func checkToken(s string) error {
	if s == "" || len(s) > quake3MaxName {
		return fmt.Errorf("want 1 to %d characters, got %q", quake3MaxName, s)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 33 || c > 126 || c == '\\' || c == ';' || c == '"' {
			return fmt.Errorf("want printable ASCII without spaces, \\ ; or \", got %q", s)
		}
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7F }
