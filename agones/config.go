package agones

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/queryd/queryd/config"
)

// Name is the config table's name, [agones].
const Name = "agones"

// Defaults and bounds of [agones].
const (
	// DefaultSDKPort is the SDK server's HTTP port when AGONES_SDK_HTTP_PORT
	// is not set, as in Agones' SDKs.
	DefaultSDKPort = "9358"
	// SDKPortEnv names the environment variable Agones sets in the game
	// server's containers to the SDK server's HTTP port.
	SDKPortEnv = "AGONES_SDK_HTTP_PORT"
	// DefaultPlayers names the List and the Counter the players come from.
	DefaultPlayers = "players"
	// DefaultPortName names the GameServer port whose number is game_port.
	DefaultPortName  = "default"
	DefaultTimeout   = 2 * time.Second        // dial, answer, and a begun line's end
	DefaultInterval  = 500 * time.Millisecond // between two GET /gameserver
	minTimeout       = 100 * time.Millisecond
	maxTimeout       = 30 * time.Second
	minInterval      = 100 * time.Millisecond
	maxInterval      = time.Minute
	maxNameLen       = 63 // a List's, Counter's or port's name (a Kubernetes name)
	exampleSDKString = "\"localhost:9358\""
)

// Config is [agones]: take the game server's state from the Agones SDK
// server beside it. The table's presence turns it on (with every key
// left at its default, [agones] alone is enough in an Agones pod);
// enabled = false keeps it written but off.
type Config struct {
	Enabled bool `toml:"enabled"`
	// SDK is the SDK server's HTTP address, "HOST:PORT"; default
	// "localhost:" + $AGONES_SDK_HTTP_PORT, else "localhost:9358".
	SDK string `toml:"sdk"`
	// PlayersList names the List whose values are the players' names
	// ("" reads no List).
	PlayersList string `toml:"players_list"`
	// PlayersCounter names the Counter whose count is the number of
	// players when the GameServer has no such List ("" reads no Counter).
	PlayersCounter string `toml:"players_counter"`
	// PortName names the GameServer status port whose number becomes the
	// state's game_port ("" sets none).
	PortName string `toml:"port_name"`
	// Timeout bounds connecting, the SDK server's answer, and the time a
	// begun line may take to end.
	Timeout config.Duration `toml:"timeout"`
	// Interval is how often GET /gameserver is asked besides the watch
	// stream (it proves the SDK server answers while nothing changes, and
	// catches what the stream does not send).
	Interval config.Duration `toml:"interval"`

	present bool   // the file has [agones] (Check)
	fromEnv string // SDK's default as the environment made it
}

// NewConfig returns [agones] with its defaults (the SDK address from the
// environment), off until a file has the table.
func NewConfig() *Config {
	sdk := DefaultSDK()
	return &Config{
		Enabled: true, SDK: sdk, fromEnv: sdk,
		PlayersList: DefaultPlayers, PlayersCounter: DefaultPlayers, PortName: DefaultPortName,
		Timeout: config.Duration(DefaultTimeout), Interval: config.Duration(DefaultInterval),
	}
}

// DefaultSDK is the SDK server's address as Agones' SDKs find it:
// "localhost:" + $AGONES_SDK_HTTP_PORT, else "localhost:9358".
func DefaultSDK() string {
	if p := os.Getenv(SDKPortEnv); p != "" {
		return net.JoinHostPort("localhost", p)
	}
	return net.JoinHostPort("localhost", DefaultSDKPort)
}

// On reports whether queryd reads the SDK server: the file has [agones]
// and its enabled is not false.
func (c *Config) On() bool { return c.present && c.Enabled }

// Mapping is where the players and the game port come from.
func (c *Config) Mapping() Mapping {
	return Mapping{List: c.PlayersList, Counter: c.PlayersCounter, Port: c.PortName}
}

// Check validates [agones] (errors keyed "agones.KEY"), with [feed]
// stale_after from cfg.
func (c *Config) Check(cfg *config.Config, errs *config.Errors) {
	c.present = cfg.Has(Name)
	if c.On() && cfg.Upstream.On() {
		errs.Add(Name, "[agones] and [upstream] protocol %q both make the state's upstream layer (the game server's own state, under the feed): "+
			"take it from one of them (Agones' GameServer, or polling the game server), not both", cfg.Upstream.Protocol)
	}
	if err := checkSDK(c.SDK); err != nil {
		if c.SDK == c.fromEnv && os.Getenv(SDKPortEnv) != "" {
			err = fmt.Errorf("%w (the default, from %s=%q): set agones.sdk", err, SDKPortEnv, os.Getenv(SDKPortEnv))
		}
		errs.Add(Name+".sdk", "%v", err)
	}
	for _, n := range []struct{ key, v string }{{"players_list", c.PlayersList}, {"players_counter", c.PlayersCounter}, {"port_name", c.PortName}} {
		if len(n.v) > maxNameLen {
			errs.Add(Name+"."+n.key, "want a name of at most %d characters (a Kubernetes name), got %d", maxNameLen, len(n.v))
		}
	}
	inBounds := true
	if d := time.Duration(c.Timeout); d < minTimeout || d > maxTimeout {
		errs.Add(Name+".timeout", "want %s to %s (default %s), got %s", minTimeout, maxTimeout, DefaultTimeout, d)
		inBounds = false
	}
	if d := time.Duration(c.Interval); d < minInterval || d > maxInterval {
		errs.Add(Name+".interval", "want %s to %s (default %s), got %s", minInterval, maxInterval, DefaultInterval, d)
		inBounds = false
	}
	stale := time.Duration(cfg.Feed.StaleAfter)
	if gap := time.Duration(c.Interval) + time.Duration(c.Timeout); c.On() && inBounds && stale > 0 && stale <= gap {
		errs.Add(Name+".interval", "interval (%s) plus timeout (%s) must be under [feed] stale_after (%s): "+
			"queryd would go silent between two reads of an SDK server that answers", time.Duration(c.Interval), time.Duration(c.Timeout), stale)
	}
}

// checkSDK accepts "HOST:PORT" (no scheme, no path).
func checkSDK(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return fmt.Errorf("want the SDK server's HTTP address as HOST:PORT such as %s, got %q", exampleSDKString, s)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("want a port from 1 to 65535, got %q", port)
	}
	return nil
}

// Warnings warns of settings that work but may not do what was meant.
func (c *Config) Warnings(cfg *config.Config) []string {
	if !c.On() {
		return nil
	}
	var w []string
	if c.PlayersList == "" && c.PlayersCounter == "" {
		w = append(w, "agones.players_list: \"\" and players_counter \"\": the GameServer's players are not read (a feeder may send them)")
	}
	if cfg.Feed.StaleAfter == 0 {
		w = append(w, "feed.stale_after: 0s: queryd keeps serving the GameServer's last state when the SDK server stops answering")
	}
	return w
}

// RestartKeys reports [agones] when any of its keys changed: the watcher
// is made once, at start.
func (c *Config) RestartKeys(old config.Section) []string {
	o, ok := old.(*Config)
	if !ok || *o != *c {
		return []string{Name}
	}
	return nil
}

// ConfigModule registers [agones] with package config: pass it to
// config.Parse, Load, LoadHost beside the protocol modules.
type ConfigModule struct{}

// Name is the table's name.
func (ConfigModule) Name() string { return Name }

// NewSection returns [agones] with its defaults.
func (ConfigModule) NewSection() config.Section { return NewConfig() }

var (
	_ config.Section   = (*Config)(nil)
	_ config.Warner    = (*Config)(nil)
	_ config.Restarter = (*Config)(nil)
	_ config.Module    = ConfigModule{}
)
