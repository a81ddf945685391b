package sleep

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/queryd/queryd/config"
)

// Name is the config table's name, [sleep].
const Name = "sleep"

// Defaults and bounds of [sleep] (doc.go, "Config", argues each).
const (
	DefaultReadyTimeout       = 60 * time.Second
	DefaultStopTimeout        = 60 * time.Second
	DefaultWakesPerHour       = 6
	DefaultHoldPerSource      = 32
	DefaultHoldBytesPerSource = 64 << 10
	DefaultHoldTotal          = 1024
	DefaultHoldBytes          = 1 << 20

	minAfter        = time.Second
	maxAfter        = 30 * 24 * time.Hour
	minTimeout      = time.Second
	maxTimeout      = time.Hour
	maxWakesPerHour = 3600
	maxHoldDgrams   = 1 << 16
	minHoldBytes    = 2 << 10 // one large game datagram of a handshake
	maxHoldBytes    = 1 << 30
	maxArgs         = 64
	maxArgLen       = 4096
)

// Config is [sleep]: stop the game server while it has no players, keep
// answering for it, and start it again when a player arrives. after > 0
// turns it on; the other keys have defaults but start and stop, which it
// needs.
type Config struct {
	// After is how long the game server must have had no players before
	// stop runs (0: never: sleep is off).
	After config.Duration `toml:"after"`
	// Start and Stop are the commands (argv, no shell) that start and stop
	// the game server, e.g. ["systemctl", "start", "mygame@1"].
	Start []string `toml:"start"`
	Stop  []string `toml:"stop"`
	// ReadyTimeout is how long a wake may take: start must have exited 0
	// and the game server answered the [upstream] poll (or its feeder
	// spoken) by then. It also bounds the start command.
	ReadyTimeout config.Duration `toml:"ready_timeout"`
	// StopTimeout bounds the stop command.
	StopTimeout config.Duration `toml:"stop_timeout"`
	// WakesPerHour is how many wakes may begin in any hour, whatever
	// asks for them (a join, the feed's wake).
	WakesPerHour int `toml:"wakes_per_hour"`
	// HoldPerSource and HoldBytesPerSource bound the game datagrams held
	// for one source (an IPv4 address or an IPv6 /64) while the game
	// server wakes; HoldTotal and HoldBytes those of every source
	// together. Past a bound the oldest are dropped first.
	HoldPerSource      int             `toml:"hold_per_source"`
	HoldBytesPerSource config.ByteSize `toml:"hold_bytes_per_source"`
	HoldTotal          int             `toml:"hold_total"`
	HoldBytes          config.ByteSize `toml:"hold_bytes"`
}

// NewConfig returns [sleep] with its defaults: off.
func NewConfig() *Config {
	return &Config{
		ReadyTimeout: config.Duration(DefaultReadyTimeout), StopTimeout: config.Duration(DefaultStopTimeout),
		WakesPerHour: DefaultWakesPerHour, Start: []string{}, Stop: []string{},
		HoldPerSource: DefaultHoldPerSource, HoldBytesPerSource: DefaultHoldBytesPerSource,
		HoldTotal: DefaultHoldTotal, HoldBytes: DefaultHoldBytes,
	}
}

// On reports whether the server sleeps: after is set.
func (c *Config) On() bool { return c.After > 0 }

// Settings are the values the Sleeper runs with.
func (c *Config) Settings() Settings {
	return Settings{
		After: time.Duration(c.After), ReadyTimeout: time.Duration(c.ReadyTimeout), StopTimeout: time.Duration(c.StopTimeout),
		Start: slices.Clone(c.Start), Stop: slices.Clone(c.Stop), WakesPerHour: c.WakesPerHour,
		Hold: HoldLimits{PerSource: c.HoldPerSource, BytesPerSource: int(c.HoldBytesPerSource),
			Total: c.HoldTotal, Bytes: int(c.HoldBytes)},
	}
}

// Check validates [sleep] (errors keyed "sleep.KEY") with the rest of the
// config in cfg: the commands exist and may be run, the bounds are sane,
// and queryd can see a join for this server and know when its game server
// is up again.
func (c *Config) Check(cfg *config.Config, errs *config.Errors) {
	if a := time.Duration(c.After); a != 0 && (a < minAfter || a > maxAfter) {
		errs.Add(Name+".after", "want 0s (never sleep) or %s to %s, got %s", minAfter, maxAfter, a)
	}
	for _, d := range []struct {
		key string
		v   config.Duration
		def time.Duration
	}{{"ready_timeout", c.ReadyTimeout, DefaultReadyTimeout}, {"stop_timeout", c.StopTimeout, DefaultStopTimeout}} {
		if v := time.Duration(d.v); v < minTimeout || v > maxTimeout {
			errs.Add(Name+"."+d.key, "want %s to %s (default %s), got %s", minTimeout, maxTimeout, d.def, v)
		}
	}
	if c.WakesPerHour < 1 || c.WakesPerHour > maxWakesPerHour {
		errs.Add(Name+".wakes_per_hour", "want 1 to %d (default %d), got %d", maxWakesPerHour, DefaultWakesPerHour, c.WakesPerHour)
	}
	c.checkHold(errs)
	if !c.On() {
		return
	}
	for _, cmd := range []struct {
		key  string
		argv []string
	}{{"start", c.Start}, {"stop", c.Stop}} {
		if err := CheckCommand(cmd.argv); err != nil {
			errs.Add(Name+"."+cmd.key, "%v", err)
		}
	}
	checkJoins(cfg, errs)
	if u := cfg.Upstream; u.On() && time.Duration(u.Timeout) >= time.Duration(c.ReadyTimeout) {
		errs.Add(Name+".ready_timeout", "%s is not longer than [upstream] timeout (%s): a wake could never see the game server answer",
			time.Duration(c.ReadyTimeout), time.Duration(u.Timeout))
	}
}

// checkHold checks the bounds on what a wake holds.
func (c *Config) checkHold(errs *config.Errors) {
	for _, n := range []struct {
		key string
		v   int
		def int
	}{{"hold_per_source", c.HoldPerSource, DefaultHoldPerSource}, {"hold_total", c.HoldTotal, DefaultHoldTotal}} {
		if n.v < 1 || n.v > maxHoldDgrams {
			errs.Add(Name+"."+n.key, "want 1 to %d datagrams (default %d), got %d", maxHoldDgrams, n.def, n.v)
		}
	}
	for _, b := range []struct {
		key string
		v   config.ByteSize
		def int
	}{{"hold_bytes_per_source", c.HoldBytesPerSource, DefaultHoldBytesPerSource}, {"hold_bytes", c.HoldBytes, DefaultHoldBytes}} {
		if b.v < minHoldBytes || b.v > maxHoldBytes {
			errs.Add(Name+"."+b.key, "want %d to %d bytes (default %d), got %d", minHoldBytes, maxHoldBytes, b.def, b.v)
		}
	}
	if c.HoldPerSource > c.HoldTotal {
		errs.Add(Name+".hold_per_source", "%d is more than hold_total (%d)", c.HoldPerSource, c.HoldTotal)
	}
	if c.HoldBytesPerSource > c.HoldBytes {
		errs.Add(Name+".hold_bytes_per_source", "%d is more than hold_bytes (%d)", c.HoldBytesPerSource, c.HoldBytes)
	}
}

// checkJoins refuses [sleep] where queryd would never see a player arrive,
// or never know that the game server it started is up. A join is a game
// datagram on queryd's port (relay mode), one the XDP program reports
// ([listen] divert), or the feed's wake from the game's matchmaking (a
// server with a [feed] table of its own); the game server is up when it
// answers the [upstream] poll, or when its feeder speaks.
func checkJoins(cfg *config.Config, errs *config.Errors) {
	relay, divert, feed := cfg.Relay.GameServer != "", len(cfg.Listen.Divert) > 0, cfg.Has("feed")
	if !relay && !divert && !feed {
		errs.Add(Name, "queryd cannot see a player arrive at this server: sleep needs relay mode ([relay] upstream: "+
			"a join is the first game datagram), [listen] divert (the XDP program reports it), or a [feed] table "+
			"(the game's matchmaking sends {\"op\":\"wake\"})")
	}
	if !cfg.Upstream.On() && !feed {
		errs.Add(Name, "queryd cannot know when the game server it started is up: sleep needs [upstream] "+
			"(its first answer) or a feeder (a [feed] table: its first message)")
	}
	if s := cfg.Section("agones"); s != nil && s.On() {
		errs.Add(Name, "[agones] runs this game server's life (Agones starts and stops it): not with [sleep]")
	}
}

// CheckCommand checks an argv command: not empty, bounded, and its program
// an absolute path to an executable regular file or a name found on PATH.
func CheckCommand(argv []string) error {
	if len(argv) == 0 || argv[0] == "" {
		return errors.New(`want the command as an array of its program and arguments, e.g. ["systemctl", "start", "mygame@1"] (no shell)`)
	}
	if len(argv) > maxArgs {
		return fmt.Errorf("at most %d arguments, got %d", maxArgs, len(argv))
	}
	for i, a := range argv {
		if len(a) > maxArgLen || strings.ContainsRune(a, 0) {
			return fmt.Errorf("argument %d: want at most %d bytes and no NUL", i, maxArgLen)
		}
	}
	prog := argv[0]
	switch {
	case filepath.IsAbs(prog):
		return checkExecutable(prog)
	case strings.ContainsRune(prog, '/'):
		return fmt.Errorf("%q: want an absolute path or a program name found on PATH, not a relative path", prog)
	}
	if _, err := exec.LookPath(prog); err != nil {
		return fmt.Errorf("%q: not found on PATH (%s): give its absolute path", prog, os.Getenv("PATH"))
	}
	return nil
}

// checkExecutable says whether path is a regular file someone may execute.
func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: no such file", path)
	case err != nil:
		return fmt.Errorf("%s: %w", path, err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s: not a regular file", path)
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s: not executable (mode %s)", path, fi.Mode().Perm())
	}
	return nil
}

// Warnings warns of settings that work but may not do what was meant.
func (c *Config) Warnings(cfg *config.Config) []string {
	var w []string
	if !c.On() && (len(c.Start) > 0 || len(c.Stop) > 0) {
		w = append(w, "sleep.after: 0s: the server never sleeps; start and stop are not run (set after)")
	}
	if c.On() && cfg.Relay.GameServer == "" && len(cfg.Listen.Divert) > 0 {
		w = append(w, "sleep: [listen] divert: the XDP program sees a join only on the [xdp] interfaces, and nothing is held "+
			"while the server wakes: a player's first attempts go unanswered and its retries get in once the game server "+
			"is up (sleep/doc.go, \"Divert\")")
	}
	return w
}

// RestartKeys reports [sleep] when any of its keys changed: the sleeper is
// made once, at start.
func (c *Config) RestartKeys(old config.Section) []string {
	o, ok := old.(*Config)
	if !ok || fmt.Sprint(*o) != fmt.Sprint(*c) {
		return []string{Name}
	}
	return nil
}

// ConfigModule registers [sleep] with package config: pass it to
// config.Parse, Load, LoadHost beside the protocol modules (after
// [agones]'s, whose Check tells whether it is on).
type ConfigModule struct{}

// Name is the table's name.
func (ConfigModule) Name() string { return Name }

// NewSection returns [sleep] with its defaults.
func (ConfigModule) NewSection() config.Section { return NewConfig() }

var (
	_ config.Section   = (*Config)(nil)
	_ config.Warner    = (*Config)(nil)
	_ config.Restarter = (*Config)(nil)
	_ config.Module    = ConfigModule{}
)
