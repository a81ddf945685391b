package config

import "time"

// Relay is [relay]: own the public game port and forward what no responder claims.
type Relay struct {
	Upstream    string   `toml:"upstream"`     // the game server, "HOST:PORT"; "" turns relay mode off
	IdleTimeout Duration `toml:"idle_timeout"` // a client session ends after this long without a packet either way; 0: 2m
	// Queue is no longer used (datagrams go straight to the session's
	// socket, whose send buffer is the queue); accepted with a warning.
	Queue       int `toml:"queue"`
	MaxSessions int `toml:"max_sessions"` // client sessions at once; when full the idlest of a sample is evicted; 0: 4096
	// MaxSessionsPerIP is how many sessions one IPv4 address or IPv6 /64
	// may hold; at the cap its own idlest session is evicted, or its new
	// port dropped.
	MaxSessionsPerIP int     `toml:"max_sessions_per_ip"`
	OpenRate         float64 `toml:"open_rate"`  // sessions one IPv4 address / IPv6 /64 may open per second; 0 turns the limit off
	OpenBurst        int     `toml:"open_burst"` // sessions one source may open at once before open_rate applies
}

// Relay defaults: for the keys left out (zero), and the keys whose zero
// means something (open_rate = 0 is no limit) in defaultRelay.
const (
	DefaultRelayIdle             = 2 * time.Minute
	DefaultRelayMaxSessions      = 4096
	DefaultRelayMaxSessionsPerIP = 16
	DefaultRelayOpenRate         = 2.0
	DefaultRelayOpenBurst        = 16
)

func defaultRelay() Relay {
	return Relay{MaxSessionsPerIP: DefaultRelayMaxSessionsPerIP, OpenRate: DefaultRelayOpenRate, OpenBurst: DefaultRelayOpenBurst}
}

// Idle returns idle_timeout, or DefaultRelayIdle when unset.
func (r Relay) Idle() time.Duration {
	if r.IdleTimeout == 0 {
		return DefaultRelayIdle
	}
	return time.Duration(r.IdleTimeout)
}

// Sessions returns max_sessions, or DefaultRelayMaxSessions when unset.
func (r Relay) Sessions() int {
	if r.MaxSessions == 0 {
		return DefaultRelayMaxSessions
	}
	return r.MaxSessions
}

func (c *Config) validateRelay(errs *Errors) {
	r := c.Relay
	if r.Upstream != "" {
		if err := checkHostPort(r.Upstream); err != nil {
			errs.add("relay.upstream", "%v", err)
		}
	}
	if d := r.Idle(); d < time.Second || d > time.Hour {
		errs.add("relay.idle_timeout", "want 1s to 1h (default 2m), got %s", d)
	}
	if n := r.Sessions(); n < 1 || n > 65536 {
		errs.add("relay.max_sessions", "want 1 to 65536 (default 4096), got %d", n)
	}
	if n := r.MaxSessionsPerIP; n < 1 || n > 65536 {
		errs.add("relay.max_sessions_per_ip", "want 1 to 65536 (default %d), got %d", DefaultRelayMaxSessionsPerIP, n)
	}
	if r.OpenRate < 0 || r.OpenRate > 1e6 {
		errs.add("relay.open_rate", "want 0 (no limit) to 1000000 sessions per second (default %v), got %v", DefaultRelayOpenRate, r.OpenRate)
	}
	if n := r.OpenBurst; n < 1 || n > 65536 {
		errs.add("relay.open_burst", "want 1 to 65536 (default %d), got %d", DefaultRelayOpenBurst, n)
	}
}

// relayWarnings are the [relay] keys that work but may not do what was meant.
func (c *Config) relayWarnings() []string {
	var w []string
	if c.Relay.Queue != 0 {
		w = append(w, "relay.queue: no longer used (datagrams go straight to each session's socket; a full socket buffer drops them); remove the key")
	}
	return w
}
