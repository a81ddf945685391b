// Package config is queryd's TOML configuration: its schema and defaults, the
// embedded default config (a demo server), loading with unknown-key checks,
// and validation that reports every error with its key.
package config

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/queryd/queryd/state"
)

// Default is the embedded default config: a demo server on UDP 0.0.0.0:27015.
//
//go:embed default.toml
var Default []byte

// Config is the whole configuration file.
type Config struct {
	Listen   Listen         `toml:"listen"`
	Feed     Feed           `toml:"feed"`
	Server   map[string]any `toml:"server"`
	Limits   Limits         `toml:"limits"`
	A2S      A2S            `toml:"a2s"`
	GameSpy4 GameSpy4       `toml:"gamespy4"`
	SAGL     SAGL           `toml:"sagl"`
	Quake3   Quake3         `toml:"quake3"`
	Relay    Relay          `toml:"relay"`
	Admin    Admin          `toml:"admin"`
	Log      Log            `toml:"log"`

	// ServerDoc is [server] as a validated state document (set by Parse).
	ServerDoc map[string]any `toml:"-"`
}

// Listen is [listen]: the UDP sockets.
type Listen struct {
	UDP        []string `toml:"udp"`         // addresses; "0.0.0.0:27015", "[::]:27015"
	Socket     string   `toml:"socket"`      // socket layer: "batch" (Linux) or "portable"; "" picks batch on Linux
	Workers    int      `toml:"workers"`     // sockets (batch) or goroutines (portable) per address; 0: one per CPU
	RecvBuffer ByteSize `toml:"recv_buffer"` // SO_RCVBUF; 0 keeps the system default
	GSO        bool     `toml:"gso"`         // batch: send a multi-datagram answer as one UDP GSO send
}

// Feed is [feed]: the game server's Unix socket.
type Feed struct {
	Socket     string   `toml:"socket"`      // path; "" picks a per-user runtime path
	Mode       string   `toml:"mode"`        // octal permissions, "0660"
	Group      string   `toml:"group"`       // group (name or id) owning the socket; "" keeps the default
	StaleAfter Duration `toml:"stale_after"` // go silent after this much feed quiet; "0s" disables
	// MaxConns caps the feed connections open at once; one more is refused with an error line.
	MaxConns int `toml:"max_conns"`
	// MaxBuffered caps the bytes the unfinished lines of all feed connections hold.
	MaxBuffered ByteSize `toml:"max_buffered"`
	// LineTimeout is how long a feed line may take from its first byte to its newline.
	LineTimeout Duration `toml:"line_timeout"`
}

// Limits is [limits]: the byte budgets against reflection.
type Limits struct {
	PerIPRate     ByteSize `toml:"per_ip_rate"`    // reply bytes per second per IPv4 address / IPv6 /64
	PerIPBurst    ByteSize `toml:"per_ip_burst"`   // bytes one source may draw at once (at most 64 KiB by default)
	UnprovenRate  ByteSize `toml:"unproven_rate"`  // reply bytes per second to all unproven sources together
	UnprovenBurst ByteSize `toml:"unproven_burst"` // burst of the unproven budget
	TrackedIPs    int      `toml:"tracked_ips"`    // sources remembered (LRU); bounds memory
}

// Admin is [admin]: the HTTP listener for /metrics and /healthz.
type Admin struct {
	Listen string `toml:"listen"` // "127.0.0.1:9273"; "" turns it off
}

// Log is [log].
type Log struct {
	Level  string `toml:"level"`  // debug, info, warn, error
	Format string `toml:"format"` // text or json
}

// Defaults returns the config every file is laid over.
func Defaults() Config {
	return Config{
		Listen: Listen{UDP: []string{"0.0.0.0:27015"}, RecvBuffer: 4 << 20, GSO: true},
		Feed: Feed{Mode: "0660", StaleAfter: Duration(60e9),
			MaxConns: 64, MaxBuffered: 16 << 20, LineTimeout: Duration(10e9)},
		Limits: Limits{
			PerIPRate: 256 << 10, PerIPBurst: 64 << 10,
			UnprovenRate: 1 << 20, UnprovenBurst: 64 << 10,
			TrackedIPs: 65536,
		},
		A2S:      defaultA2S(),
		GameSpy4: defaultGameSpy4(),
		SAGL:     defaultSAGL(),
		Quake3:   defaultQuake3(),
		Relay:    defaultRelay(),
		Admin:    Admin{Listen: "127.0.0.1:9273"},
		Log:      Log{Level: "info", Format: "text"},
	}
}

// Error is one config error: the key (dotted path) and what is wrong.
type Error struct {
	Key    string
	Reason string
}

func (e *Error) Error() string { return e.Key + ": " + e.Reason }

// Errors is every error found in one config, in key order.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

func (es *Errors) add(key, format string, args ...any) {
	*es = append(*es, &Error{Key: key, Reason: fmt.Sprintf(format, args...)})
}

// MaxFileSize is the largest config file queryd reads, in bytes (1 MiB).
const MaxFileSize = 1 << 20

// Load reads and parses a config file. A file over MaxFileSize is refused
// after reading at most MaxFileSize+1 bytes of it.
func Load(path string) (*Config, error) {
	b, err := readLimited(path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("config %s:\n%w", path, err)
	}
	return c, nil
}

// readLimited reads a file of at most max bytes, and no more than max+1
// bytes of a larger one.
func readLimited(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes (1 MiB), the most a config may have", path, max)
	}
	return b, nil
}

// Parse parses and validates a config. Its error is an Errors listing every
// problem with its key, or a TOML syntax error. A config over MaxFileSize,
// nested deeper than MaxDepth or with more than MaxKeyParts, is refused
// before it is decoded.
func Parse(data []byte) (*Config, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("config of %d bytes: larger than %d bytes (1 MiB), the most a config may have", len(data), MaxFileSize)
	}
	if err := checkDepth(data, MaxDepth); err != nil {
		var le *LimitError
		if errors.As(err, &le) {
			return nil, Errors{{Key: le.Key, Reason: le.Error()}}
		}
		return nil, err
	}
	c := Defaults()
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&c)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			if perr.LastKey != "" {
				return nil, Errors{{Key: perr.LastKey, Reason: fmt.Sprintf("%s (line %d)", perr.Message, perr.Position.Line)}}
			}
			return nil, fmt.Errorf("TOML syntax: line %d: %s", perr.Position.Line, perr.Message)
		}
		return nil, Errors{{Key: keyOfDecodeError(err), Reason: err.Error()}}
	}
	var errs Errors
	for _, k := range md.Undecoded() {
		if len(k) > 1 && k[0] == "server" {
			continue // [server] is a free-form state document, checked by validateServer
		}
		errs.add(k.String(), "unknown key")
	}
	c.validate(&errs)
	if len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool { return errs[i].Key < errs[j].Key })
		return nil, errs
	}
	return &c, nil
}

func keyOfDecodeError(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, `(last key "`); i >= 0 {
		rest := msg[i+len(`(last key "`):]
		if j := strings.Index(rest, `"`); j >= 0 {
			return rest[:j]
		}
	}
	return "config"
}

func (c *Config) validate(errs *Errors) {
	if len(c.Listen.UDP) == 0 {
		errs.add("listen.udp", "at least one address is needed")
	}
	seen := map[string]bool{}
	for i, a := range c.Listen.UDP {
		key := fmt.Sprintf("listen.udp[%d]", i)
		if _, err := netip.ParseAddrPort(a); err != nil {
			errs.add(key, "want IP:PORT such as \"0.0.0.0:27015\" or \"[::]:27015\", got %q", a)
		} else if seen[a] {
			errs.add(key, "%q is listed twice", a)
		}
		seen[a] = true
	}
	switch c.Listen.Socket {
	case "", "batch", "portable":
	default:
		errs.add("listen.socket", "want \"batch\" (Linux) or \"portable\", got %q", c.Listen.Socket)
	}
	if c.Listen.Workers < 0 || c.Listen.Workers > 256 {
		errs.add("listen.workers", "want 0 (one per CPU) to 256, got %d", c.Listen.Workers)
	}
	if c.Listen.RecvBuffer > 1<<30 {
		errs.add("listen.recv_buffer", "at most 1GiB")
	}
	c.validateFeed(errs)
	c.validateLimits(errs)
	c.validateServer(errs)
	c.validateA2S(errs)
	c.validateGameSpy4(errs)
	c.validateSAGL(errs)
	c.validateQuake3(errs)
	if c.Admin.Listen != "" {
		if _, err := netip.ParseAddrPort(c.Admin.Listen); err != nil {
			errs.add("admin.listen", "want IP:PORT such as \"127.0.0.1:9273\", or \"\" to turn it off, got %q", c.Admin.Listen)
		}
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		errs.add("log.level", "want debug, info, warn or error, got %q", c.Log.Level)
	}
	if c.Log.Format != "text" && c.Log.Format != "json" {
		errs.add("log.format", "want text or json, got %q", c.Log.Format)
	}
}

func (c *Config) validateFeed(errs *Errors) {
	if _, err := c.FeedMode(); err != nil {
		errs.add("feed.mode", "%v", err)
	}
	if c.Feed.Socket != "" && !filepath.IsAbs(c.Feed.Socket) {
		errs.add("feed.socket", "want an absolute path, got %q", c.Feed.Socket)
	}
	if len(c.Feed.Socket) > 107 {
		errs.add("feed.socket", "path too long for a Unix socket (%d bytes, at most 107)", len(c.Feed.Socket))
	}
	if c.Feed.MaxConns < 1 || c.Feed.MaxConns > 65536 {
		errs.add("feed.max_conns", "want 1 to 65536 connections, got %d", c.Feed.MaxConns)
	}
	if c.Feed.MaxBuffered < 1<<20 || c.Feed.MaxBuffered > 1<<30 {
		errs.add("feed.max_buffered", "want 1MiB (one longest line) to 1GiB, got %d bytes", c.Feed.MaxBuffered)
	}
	if time.Duration(c.Feed.LineTimeout) < 100*time.Millisecond {
		errs.add("feed.line_timeout", "want at least 100ms, got %v", time.Duration(c.Feed.LineTimeout))
	}
}

// FeedMode returns [feed] mode as file permissions.
func (c *Config) FeedMode() (os.FileMode, error) {
	m, err := strconv.ParseUint(c.Feed.Mode, 8, 32)
	if err != nil || m > 0o777 || m&0o600 != 0o600 {
		return 0, fmt.Errorf("want octal permissions that let the owner read and write, such as \"0660\", got %q", c.Feed.Mode)
	}
	return os.FileMode(m), nil
}

// FeedSocket returns the feed socket path: [feed] socket, or when empty
// $XDG_RUNTIME_DIR/queryd/feed.sock, or <tmp>/queryd-<uid>/feed.sock.
func (c *Config) FeedSocket() string {
	if c.Feed.Socket != "" {
		return c.Feed.Socket
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "queryd", "feed.sock")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("queryd-%d", os.Getuid()), "feed.sock")
}

func (c *Config) validateLimits(errs *Errors) {
	l := c.Limits
	if l.PerIPRate < 1 {
		errs.add("limits.per_ip_rate", "must be more than 0")
	}
	if l.PerIPBurst < 1500 {
		errs.add("limits.per_ip_burst", "must be at least 1500 bytes (one full datagram)")
	}
	if l.UnprovenRate < 1 {
		errs.add("limits.unproven_rate", "must be more than 0")
	}
	if l.UnprovenBurst < 1500 {
		errs.add("limits.unproven_burst", "must be at least 1500 bytes (one full datagram)")
	}
	if l.TrackedIPs < 16 || l.TrackedIPs > 1<<24 {
		errs.add("limits.tracked_ips", "want 16 to 16777216, got %d", l.TrackedIPs)
	}
}

func (c *Config) validateServer(errs *Errors) {
	doc := map[string]any{}
	if c.Server != nil {
		var err error
		if doc, err = state.Normalize(c.Server); err != nil {
			errs.add("server", "%v", err)
			return
		}
	}
	if err := state.Validate(doc); err != nil {
		var fe *state.FieldError
		if errors.As(err, &fe) {
			errs.add("server."+fe.Path, "%s", fe.Reason)
		} else {
			errs.add("server", "%v", err)
		}
		return
	}
	c.ServerDoc = doc
}

func isLoopback(addr string) bool {
	ap, err := netip.ParseAddrPort(addr)
	return err == nil && ap.Addr().IsLoopback()
}
