// Package config is queryd's TOML configuration: the core tables ([listen],
// [feed], [limits], [relay], [upstream], [admin], [log], [xdp], [server], [host]), the embedded default
// config (a demo server), and loading that reports every error with its key
// in one run. Each protocol module owns its own table ([a2s], [sagl], …):
// its section type, defaults and bounds live in the module's package, which
// the caller passes to Parse and Load (see Module). Values are parsed once
// into typed fields: addresses as netip.AddrPort, modes as fs.FileMode, the
// log level as slog.Level, enums as named types.
//
// Host mode: one queryd for many game servers. A main file's [servers]
// include lists globs (relative to its folder, or absolute; wildcards in
// the file name only; each pattern's matches sorted; none matching is
// fine; names starting with '.' skipped, as a shell does) of server
// files, each one server named by its file name without ".toml" (letters, digits, '-', '_'; "main"
// and "feed" are taken). A server file holds only per-server tables
// ([listen], [feed], [limits], [server], [relay], [upstream], the protocol
// sections); the host-wide ones ([admin], [log], [xdp], [servers], [host])
// are the main file's, and an error elsewhere. The main file is itself the server
// "main" when it has a per-server table or no [servers] table: every
// single-server config is a host of one. LoadHost reads them all (at most
// MaxServers servers, each file bounded as one config is): the main file's
// errors fail it; an included file that cannot be read or parsed, has a bad
// or taken name, or listens on an address or socket an earlier server holds
// (wildcards overlap: 0.0.0.0 covers IPv4, [::] everything; port 0 nothing;
// a module section lists its own listeners through Binder) goes to
// Host.Failed, and the others run. An included server without [feed]
// socket feeds NAME.sock beside the default feed.sock. CheckHost is
// `queryd check`: every file's errors and warnings, each with its file.
package config

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/netip"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/internal/nearest"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/state"
)

// Default is the embedded default config: a demo server on UDP 0.0.0.0:27015.
//
//go:embed default.toml
var Default []byte

// Config is the whole configuration file.
type Config struct {
	Listen Listen         `toml:"listen"`
	Feed   Feed           `toml:"feed"`
	Server map[string]any `toml:"server"`
	Limits Limits         `toml:"limits"`
	Relay  Relay          `toml:"relay"`
	// Upstream is [upstream]: the game server queryd takes the state from.
	Upstream Upstream `toml:"upstream"`
	Admin    Admin    `toml:"admin"`
	Log      Log      `toml:"log"`
	XDP      XDP      `toml:"xdp"`
	// Servers is [servers]: the server files of host mode (main file only).
	Servers Servers `toml:"servers"`
	// Host is [host]: the host-wide budgets every server of this queryd
	// shares (main file only).
	Host HostLimits `toml:"host"`

	// Modules are the protocol modules' sections, in registration order.
	Modules []NamedSection `toml:"-"`
	// ServerDoc is [server] as a validated state document (set by Parse).
	ServerDoc map[string]any `toml:"-"`

	present    []string       // the tables the file has, sorted
	lines      map[string]int // the line of each key of the file (keyLines)
	serverName string         // an included server's name (LoadHost): its default feed socket is NAME.sock
	// serverWarnings are [server]'s values the state cuts to its limits.
	serverWarnings []string
}

// Listen is [listen]: the UDP sockets.
type Listen struct {
	UDP             AddrPorts             `toml:"udp"`              // addresses; "0.0.0.0:27015", "[::]:27015"
	Divert          AddrPorts             `toml:"divert"`           // stock game servers' addresses whose queries XDP takes (daemon/divert.go)
	DivertProtocols []string              `toml:"divert_protocols"` // protocols whose queries divert takes (modules that are on); empty: DivertTakes
	Socket          responder.SocketLayer `toml:"socket"`           // socket layer; "" picks batch on Linux
	Workers         int                   `toml:"workers"`          // sockets (batch, uring) or goroutines (portable) per address; 0: one per CPU
	RecvBuffer      ByteSize              `toml:"recv_buffer"`      // SO_RCVBUF; 0 keeps the system default
	GSO             bool                  `toml:"gso"`              // batch: send a multi-datagram answer as one UDP GSO send
	// SteerProven gives proven sources sockets of their own (batch, uring;
	// needs CAP_BPF, else queryd runs without and logs so).
	SteerProven bool `toml:"steer_proven"`
}

// Feed is [feed]: the game server's Unix socket.
type Feed struct {
	Socket     string      `toml:"socket"`      // path; "" picks a per-user runtime path
	Mode       fs.FileMode `toml:"mode"`        // permissions, written as an octal string: "0660"
	Group      string      `toml:"group"`       // group (name or id) owning the socket; "" keeps the default
	StaleAfter Duration    `toml:"stale_after"` // go silent after this much feed quiet; "0s" disables
	// MaxConns caps the feed connections open at once; one more is refused with an error line.
	MaxConns int `toml:"max_conns"`
	// MaxBuffered caps the bytes the unfinished lines of all feed connections hold.
	MaxBuffered ByteSize `toml:"max_buffered"`
	// LineTimeout is how long a feed line may take from its first byte to its newline.
	LineTimeout Duration `toml:"line_timeout"`
	// HTTP is the loopback HTTP feed's address (feed.HTTPServer); "" (the zero AddrPort) turns it off.
	HTTP netip.AddrPort `toml:"http"`
	// HTTPTokenFile holds the HTTP feed's bearer token; required with HTTP.
	HTTPTokenFile string `toml:"http_token_file"`
	// HTTPMaxConns caps the HTTP feed's connections open at once.
	HTTPMaxConns int `toml:"http_max_conns"`
}

// Limits is [limits]: the byte budgets against reflection.
type Limits struct {
	PerIPRate     ByteSize `toml:"per_ip_rate"`    // reply bytes per second per IPv4 address / IPv6 /64
	PerIPBurst    ByteSize `toml:"per_ip_burst"`   // bytes one source may draw at once (at most 64 KiB by default)
	UnprovenRate  ByteSize `toml:"unproven_rate"`  // reply bytes per second to all unproven sources together
	UnprovenBurst ByteSize `toml:"unproven_burst"` // burst of the unproven budget
	TrackedIPs    int      `toml:"tracked_ips"`    // sources remembered (16 B each per table); bounds memory
	// UnprovenPacketRate and UnprovenPacketBurst are the proven-source
	// tier's gate: requests per second from sources that have not proven
	// their address answered at all, all together (0: no gate); past it
	// they are shed, counted "unproven_shed".
	UnprovenPacketRate  int `toml:"unproven_packet_rate"`
	UnprovenPacketBurst int `toml:"unproven_packet_burst"`
	// ProvenFor is how long a source that returned a valid challenge token
	// stays proven (0: never remembered).
	ProvenFor Duration `toml:"proven_for"`
	// Deny: sources neither the socket path nor the XDP program answers
	// ("CIDR", or an address alone: its /32 or /128); reloaded on SIGHUP.
	Deny Prefixes        `toml:"deny"`
	deny *responder.Deny // Deny parsed once (validateLimits), shared by both paths
}

// DenyList is [limits] deny, parsed: the one list the socket path and the
// XDP program both check (nil: none).
func (l Limits) DenyList() *responder.Deny { return l.deny }

// HostLimits is [host]: what every server of one queryd together may send
// one source, on top of each server's [limits] (main file only; see
// HostBudget).
type HostLimits struct {
	// PerIPRate is the reply bytes per second all servers together may send
	// one IPv4 address or IPv6 /64; 0: responder.HostFactor (4) times the
	// main file's [limits] per_ip_rate.
	PerIPRate ByteSize `toml:"per_ip_rate"`
	// PerIPBurst is that budget's burst; 0: responder.HostFactor times the
	// main file's [limits] per_ip_burst.
	PerIPBurst ByteSize `toml:"per_ip_burst"`
}

// HostBudget is the host-wide per-IP budget of a main file: [host], its
// zeros derived from [limits] (responder.DefaultHostLimits), as many
// sources tracked as [limits] tracked_ips.
func (c *Config) HostBudget() responder.HostLimits {
	l := responder.DefaultHostLimits(responder.Limits{
		PerIPRate: int(c.Limits.PerIPRate), PerIPBurst: int(c.Limits.PerIPBurst),
		UnprovenRate: int(c.Limits.UnprovenRate), UnprovenBurst: int(c.Limits.UnprovenBurst),
		TrackedIPs: c.Limits.TrackedIPs,
	})
	if c.Host.PerIPRate > 0 {
		l.PerIPRate = int(c.Host.PerIPRate)
	}
	if c.Host.PerIPBurst > 0 {
		l.PerIPBurst = int(c.Host.PerIPBurst)
	}
	return l
}

// Admin is [admin]: the HTTP listener for /metrics, /healthz and the
// status page.
type Admin struct {
	Listen netip.AddrPort `toml:"listen"` // "127.0.0.1:9273"; "" (the zero AddrPort) turns it off
	// AllowedHosts are the host names a request's Host may carry besides IP
	// addresses and localhost (a reverse proxy's or a DNS name Prometheus
	// scrapes by); any other name gets 421 (DNS rebinding).
	AllowedHosts []string `toml:"allowed_hosts"`
	// PrivateNetwork says listen is on a network only trusted clients
	// reach: a container's or pod's own (what the runtime publishes), a
	// monitoring LAN. It only silences the warning about a non-loopback
	// listen.
	PrivateNetwork bool `toml:"private_network"`
}

// Log is [log].
type Log struct {
	Level  slog.Level `toml:"level"`  // debug, info, warn, error
	Format LogFormat  `toml:"format"` // text or json
}

// XDP is [xdp]: the optional XDP fast path (Linux, package xdp), which
// answers the hot single-datagram queries in the network driver.
type XDP struct {
	Interfaces []string `toml:"interfaces"` // interfaces to attach to; empty (the default): off
	Mode       XDPMode  `toml:"mode"`       // native (falls back to generic with a warning) or generic
}

// Defaults returns the core config every file is laid over; each module's
// section starts from its NewSection.
func Defaults() Config {
	l := responder.DefaultLimits
	return Config{
		Listen: Listen{UDP: AddrPorts{netip.MustParseAddrPort("0.0.0.0:27015")}, RecvBuffer: 4 << 20, GSO: true, SteerProven: true},
		Feed: Feed{Mode: 0o660, StaleAfter: Duration(60e9),
			MaxConns: feed.DefaultMaxConns, MaxBuffered: feed.DefaultMaxBuffered, LineTimeout: Duration(feed.DefaultLineTimeout),
			HTTPMaxConns: feed.DefaultHTTPMaxConns},
		Limits: Limits{
			PerIPRate: ByteSize(l.PerIPRate), PerIPBurst: ByteSize(l.PerIPBurst),
			UnprovenRate: ByteSize(l.UnprovenRate), UnprovenBurst: ByteSize(l.UnprovenBurst),
			TrackedIPs:         l.TrackedIPs,
			UnprovenPacketRate: l.UnprovenPacketRate, UnprovenPacketBurst: l.UnprovenPacketBurst,
			ProvenFor: Duration(l.ProvenFor),
		},
		Relay:    defaultRelay(),
		Upstream: defaultUpstream(),
		Admin:    Admin{Listen: netip.MustParseAddrPort("127.0.0.1:9273")},
		Log:      Log{Level: slog.LevelInfo, Format: LogText},
		XDP:      XDP{Mode: XDPNative},
	}
}

// MaxFileSize is the largest config file queryd reads, in bytes (1 MiB).
const MaxFileSize = 1 << 20

// Load reads and parses a config file with the modules' sections. A file
// over MaxFileSize is refused after reading at most MaxFileSize+1 bytes.
func Load(path string, mods ...Module) (*Config, error) {
	b, err := readLimited(path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(b, mods...)
	if err != nil {
		return nil, fmt.Errorf("config %s:\n%w", path, err)
	}
	return c, nil
}

// Check reads and parses a config file as Load does, and returns besides
// every error the warnings of what did decode, so that `queryd check` shows
// both in one run (a warning about a key that has an error is left out).
// The config is nil when the file could not be read or decoded at all; with
// errors it is the decoded part, for warnings only.
func Check(path string, mods ...Module) (*Config, []string, error) {
	b, err := readLimited(path, MaxFileSize)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	c, err := parse(b, mods...)
	if c == nil {
		return nil, nil, fmt.Errorf("config %s:\n%w", path, err)
	}
	var errs Errors
	errors.As(err, &errs)
	var warnings []string
	for _, w := range c.Warnings() {
		key, _, _ := strings.Cut(w, ": ")
		if !errs.Covers(key) {
			warnings = append(warnings, w)
		}
	}
	if err != nil {
		return c, warnings, fmt.Errorf("config %s:\n%w", path, err)
	}
	return c, warnings, nil
}

// readLimited reads a file of at most max bytes, and no more than max+1
// bytes of a larger one.
func readLimited(path string, max int64) ([]byte, error) {
	return readLimitedFlags(path, max, os.O_RDONLY)
}

// readLimitedFlags is readLimited, opening the file with flags.
func readLimitedFlags(path string, max int64, flags int) ([]byte, error) {
	f, err := os.OpenFile(path, flags, 0)
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

// Parse parses and validates a config with the modules' sections. Its error
// is an Errors listing every problem with its key — a value of the wrong
// type hides no other error — or a TOML syntax error. A config over
// MaxFileSize, nested deeper than MaxDepth or with more than MaxKeyParts is
// refused before it is decoded.
func Parse(data []byte, mods ...Module) (*Config, error) {
	c, err := parse(data, mods...)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// parse is Parse, but with errors it returns the config as far as it
// decoded (values in error left at their defaults) beside them; the config
// is nil when the text could not be decoded at all.
func parse(data []byte, mods ...Module) (*Config, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("config of %d bytes: larger than %d bytes (1 MiB), the most a config may have", len(data), MaxFileSize)
	}
	if err := checkDepth(data, MaxDepth); err != nil {
		var le *LimitError
		if errors.As(err, &le) {
			return nil, Errors{{Key: le.Key, Reason: le.Error()}} // its line is in its Reason
		}
		return nil, err
	}
	var raw map[string]toml.Primitive
	md, err := toml.Decode(string(data), &raw)
	if err != nil {
		return nil, syntaxError(err)
	}
	c := Defaults()
	for _, m := range mods {
		c.Modules = append(c.Modules, NamedSection{Name: m.Name(), Section: m.NewSection()})
	}
	var errs Errors
	c.present = sortedNames(raw)
	c.lines = keyLines(data)
	c.decode(md, raw, &errs)
	decodeErrs := len(errs)
	c.validate(&errs)
	c.checkUpstreamProtocol(mods, &errs)
	errs = dropShadowed(errs, decodeErrs)
	c.Locate(errs)
	if len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool { return errs[i].Key < errs[j].Key })
		return &c, errs
	}
	return &c, nil
}

// dropShadowed drops the errors after the first n (the decoding's) whose
// key is, or is under, one of the first n's: a value that could not be
// decoded is not checked again (a zero value or the default stood in).
func dropShadowed(errs Errors, n int) Errors {
	out := errs[:n:n]
	for _, e := range errs[n:] {
		shadowed := slices.ContainsFunc(errs[:n], func(d *Error) bool {
			return e.Key == d.Key || strings.HasPrefix(e.Key, d.Key+".") || strings.HasPrefix(e.Key, d.Key+"[")
		})
		if !shadowed {
			out = append(out, e)
		}
	}
	return out
}

// syntaxError reports a TOML syntax error with its line (and key).
func syntaxError(err error) error {
	var perr toml.ParseError
	if errors.As(err, &perr) {
		if perr.LastKey != "" {
			return Errors{{Key: perr.LastKey, Reason: perr.Message, Line: perr.Position.Line}}
		}
		return fmt.Errorf("TOML syntax: line %d: %s", perr.Position.Line, perr.Message)
	}
	return fmt.Errorf("TOML: %w", err)
}

// Locate gives each error without a line the line of its key in c's file,
// or of the nearest key above it there; an error about a key the file
// does not have (nor any table above it) keeps none.
func (c *Config) Locate(errs Errors) {
	for _, e := range errs {
		if e.Line == 0 {
			e.Line = lineOfKey(c.lines, e.Key)
		}
	}
}

// tables returns the core tables by name, as pointers to decode into.
func (c *Config) tables() map[string]any {
	return map[string]any{
		"listen": &c.Listen, "feed": &c.Feed, "limits": &c.Limits,
		"relay": &c.Relay, "upstream": &c.Upstream, "admin": &c.Admin, "log": &c.Log, "xdp": &c.XDP,
		"servers": &c.Servers, "host": &c.Host,
	}
}

// tableNames are the names of the tables a config may have, sorted.
func (c *Config) tableNames() []string {
	names := append(sortedNames(c.tables()), "server")
	for _, s := range c.Modules {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	return names
}

// decode lays each table of the file over the defaults, key by key.
func (c *Config) decode(md toml.MetaData, raw map[string]toml.Primitive, errs *Errors) {
	core := c.tables()
	for _, name := range sortedNames(raw) {
		switch {
		case name == "server":
			c.decodeServer(md, raw[name], errs)
		case core[name] != nil:
			decodeTable(md, raw[name], name, core[name], errs)
		case c.Section(name) != nil:
			decodeTable(md, raw[name], name, c.Section(name), errs)
		default:
			errs.Add(keyPart(name), "unknown table%s", nearest.Hint(name, c.tableNames()))
		}
	}
	c.divertOnly(md)
	for _, k := range md.Undecoded() {
		known := core[k[0]] != nil || c.Section(k[0]) != nil // else reported as an unknown table
		if known && len(k) > 1 && !isReported(*errs, k[0]+"."+keyPart(k[1])) {
			errs.Add(k.String(), "unknown key") // inside an array of tables, e.g. [[quake3.masters]]
		}
	}
}

// decodeServer decodes [server], the state document, as it is: its
// fields are checked by validateServer.
func (c *Config) decodeServer(md toml.MetaData, prim toml.Primitive, errs *Errors) {
	var raw any
	if err := md.PrimitiveDecode(prim, &raw); err != nil {
		errs.Add("server", "want a table of the state document's fields: %s", decodeReason(err))
		return
	}
	doc, ok := raw.(map[string]any)
	if !ok {
		errs.Add("server", "want a table of the state document's fields, got %s", tomlType(raw))
		return
	}
	c.Server = doc
}

func (c *Config) validate(errs *Errors) {
	c.validateListen(errs)
	c.validateFeed(errs)
	c.validateLimits(errs)
	c.validateServer(errs)
	c.validateRelay(errs)
	c.validateUpstream(errs)
	c.validateXDP(errs)
	c.validateAdmin(errs)
	c.validateServers(errs)
	c.validateHost(errs)
	for _, s := range c.Modules {
		s.Section.Check(c, errs)
	}
}

func (c *Config) validateServer(errs *Errors) {
	doc := map[string]any{}
	if c.Server != nil {
		var err error
		if doc, err = state.Normalize(c.Server); err != nil {
			errs.Add("server", "%v", err)
			return
		}
	}
	bad, cut := state.Check(doc)
	c.serverWarnings = state.WarningLines("server.", cut)
	for _, err := range bad {
		var fe *state.FieldError
		if errors.As(err, &fe) {
			errs.Add("server."+fe.Path, "%s", fe.Reason)
		} else {
			errs.Add("server", "%v", err)
		}
	}
	if len(bad) == 0 {
		c.ServerDoc = doc
	}
}

// Warnings lists settings that are valid but likely to hurt, with their keys.
func (c *Config) Warnings() []string {
	w := slices.Clone(c.serverWarnings)
	if c.Admin.Listen.IsValid() && !c.Admin.Listen.Addr().IsLoopback() && !c.Admin.PrivateNetwork {
		w = append(w, fmt.Sprintf("admin.listen: %s is not a loopback address: the status page (player names, "+
			"client addresses), /status.json and /metrics are reachable from the network without authentication; "+
			"keep it on 127.0.0.1 and reach it through an SSH tunnel (docs/status.md), or, on a container's own "+
			"network or a private one, say so with admin.private_network = true", c.Admin.Listen))
	}
	for _, s := range c.Modules {
		if wr, ok := s.Section.(Warner); ok {
			w = append(w, wr.Warnings(c)...)
		}
	}
	w = append(w, c.upstreamWarnings()...)
	w = append(w, c.divertWarnings()...)
	return append(w, c.relayWarnings()...)
}

// RestartKeys lists the keys whose change from old takes effect only on a
// restart: [listen], [feed], [admin], [relay], [upstream], [log], [xdp] and the modules' own.
func (c *Config) RestartKeys(old *Config) []string {
	var keys []string
	if fmt.Sprint(old.Listen) != fmt.Sprint(c.Listen) {
		keys = append(keys, "listen")
	}
	if old.Feed != c.Feed {
		keys = append(keys, "feed")
	}
	if fmt.Sprint(old.Admin) != fmt.Sprint(c.Admin) {
		keys = append(keys, "admin")
	}
	if old.Relay != c.Relay {
		keys = append(keys, "relay")
	}
	if old.Upstream != c.Upstream {
		keys = append(keys, "upstream")
	}
	if old.Log != c.Log {
		keys = append(keys, "log")
	}
	if fmt.Sprint(old.XDP) != fmt.Sprint(c.XDP) {
		keys = append(keys, "xdp")
	}
	for _, s := range c.Modules {
		r, ok := s.Section.(Restarter)
		if prev := old.Section(s.Name); ok && prev != nil {
			keys = append(keys, r.RestartKeys(prev)...)
		}
	}
	return keys
}
