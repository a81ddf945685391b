package config

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/responder"
)

func (c *Config) validateListen(errs *Errors) {
	if len(c.Listen.UDP) == 0 && len(c.Listen.Divert) == 0 && !isReported(*errs, "listen.udp") { // not when every element is bad
		errs.Add("listen.udp", "at least one address is needed")
	}
	c.validateDivert(errs)
	if c.Listen.Workers < 0 || c.Listen.Workers > 256 {
		errs.Add("listen.workers", "want 0 (one per CPU) to 256, got %d", c.Listen.Workers)
	}
	if c.Listen.RecvBuffer > 1<<30 {
		errs.Add("listen.recv_buffer", "at most 1GiB")
	}
}

func (c *Config) validateFeed(errs *Errors) {
	if m := c.Feed.Mode; m&0o600 != 0o600 {
		errs.Add("feed.mode", "want octal permissions that let the owner read and write, such as \"0660\", got %q", fmt.Sprintf("%04o", uint32(m)))
	}
	if c.Feed.Socket != "" && !filepath.IsAbs(c.Feed.Socket) {
		errs.Add("feed.socket", "want an absolute path, got %q", c.Feed.Socket)
	}
	if len(c.Feed.Socket) > 107 {
		errs.Add("feed.socket", "path too long for a Unix socket (%d bytes, at most 107)", len(c.Feed.Socket))
	}
	if c.Feed.MaxConns < 1 || c.Feed.MaxConns > 65536 {
		errs.Add("feed.max_conns", "want 1 to 65536 connections, got %d", c.Feed.MaxConns)
	}
	if c.Feed.MaxBuffered < 1<<20 || c.Feed.MaxBuffered > 1<<30 {
		errs.Add("feed.max_buffered", "want 1MiB (one longest line) to 1GiB, got %d bytes", c.Feed.MaxBuffered)
	}
	if time.Duration(c.Feed.LineTimeout) < 100*time.Millisecond {
		errs.Add("feed.line_timeout", "want at least 100ms, got %v", time.Duration(c.Feed.LineTimeout))
	}
	c.validateFeedHTTP(errs)
}

// validateFeedHTTP checks the HTTP feed's keys (the token file itself is
// read by `queryd check` and at start: see feed.ReadToken).
func (c *Config) validateFeedHTTP(errs *Errors) {
	f := c.Feed
	if f.HTTPMaxConns < 1 || f.HTTPMaxConns > 4096 {
		errs.Add("feed.http_max_conns", "want 1 to 4096 connections, got %d", f.HTTPMaxConns)
	}
	if !f.HTTP.IsValid() {
		return
	}
	if err := feed.CheckHTTPAddr(f.HTTP); err != nil {
		errs.Add("feed.http", "%v", err)
	}
	switch {
	case f.HTTPTokenFile == "":
		errs.Add("feed.http_token_file", "required when feed.http is set: a file (mode 0600 or 0640) holding the bearer token, at least %d bytes", feed.MinTokenLen)
	case !filepath.IsAbs(f.HTTPTokenFile):
		errs.Add("feed.http_token_file", "want an absolute path, got %q", f.HTTPTokenFile)
	}
}

// FeedSocket returns the feed socket path: [feed] socket, or when empty
// $XDG_RUNTIME_DIR/queryd/feed.sock, or <tmp>/queryd-<uid>/feed.sock; an
// included server of a host (LoadHost) gets NAME.sock in that folder.
func (c *Config) FeedSocket() string {
	if c.Feed.Socket != "" {
		return c.Feed.Socket
	}
	base := "feed.sock"
	if c.serverName != "" {
		base = c.serverName + ".sock"
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "queryd", base)
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("queryd-%d", os.Getuid()), base)
}

func (c *Config) validateLimits(errs *Errors) {
	l := c.Limits
	if l.PerIPRate < 1 {
		errs.Add("limits.per_ip_rate", "must be more than 0")
	}
	if l.PerIPBurst < 1500 {
		errs.Add("limits.per_ip_burst", "must be at least 1500 bytes (one full datagram)")
	}
	if l.UnprovenRate < 1 {
		errs.Add("limits.unproven_rate", "must be more than 0")
	}
	if l.UnprovenBurst < 1500 {
		errs.Add("limits.unproven_burst", "must be at least 1500 bytes (one full datagram)")
	}
	if l.UnprovenPacketRate < 0 {
		errs.Add("limits.unproven_packet_rate", "want requests per second, 0 (no gate) or more, got %d", l.UnprovenPacketRate)
	}
	if l.UnprovenPacketRate > 0 && l.UnprovenPacketBurst < 1 {
		errs.Add("limits.unproven_packet_burst", "want at least 1 request, got %d", l.UnprovenPacketBurst)
	}
	if l.TrackedIPs < 16 || l.TrackedIPs > 1<<24 {
		errs.Add("limits.tracked_ips", "want 16 to 16777216, got %d", l.TrackedIPs)
	}
	d, err := responder.NewDeny(l.Deny)
	if err != nil {
		errs.Add("limits.deny", "%v", err)
	}
	c.Limits.deny = d
}

// CheckHostPort accepts "host:port" with a non-empty host and a port 1-65535.
func CheckHostPort(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return fmt.Errorf("want HOST:PORT such as \"master.example.org:27950\" or \"127.0.0.1:27961\", got %q", s)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("want a port from 1 to 65535, got %q", port)
	}
	return nil
}

// MaxXDPInterfaces bounds [xdp] interfaces.
const MaxXDPInterfaces = 16

func (c *Config) validateXDP(errs *Errors) {
	if len(c.XDP.Interfaces) > MaxXDPInterfaces {
		errs.Add("xdp.interfaces", "at most %d interfaces, got %d", MaxXDPInterfaces, len(c.XDP.Interfaces))
	}
	seen := map[string]bool{}
	for i, name := range c.XDP.Interfaces {
		key := fmt.Sprintf("xdp.interfaces[%d]", i)
		switch {
		case name == "" || len(name) > 15 || strings.ContainsAny(name, "/ \t\n:"):
			errs.Add(key, "want an interface name such as \"eth0\" (1 to 15 characters, no '/', ':' or space), got %q", name)
		case seen[name]:
			errs.Add(key, "%q is listed twice", name)
		}
		seen[name] = true
	}
}

// MaxAdminHosts bounds [admin] allowed_hosts.
const MaxAdminHosts = 64

func (c *Config) validateAdmin(errs *Errors) {
	if len(c.Admin.AllowedHosts) > MaxAdminHosts {
		errs.Add("admin.allowed_hosts", "at most %d names, got %d", MaxAdminHosts, len(c.Admin.AllowedHosts))
	}
	for i, h := range c.Admin.AllowedHosts {
		if !hostName(h) {
			errs.Add(fmt.Sprintf("admin.allowed_hosts[%d]", i), "want a host name such as \"status.example.org\" (letters, digits, '-' and '.', no port), got %q", h)
		}
	}
}

// hostName reports whether h is a DNS host name (no port, no scheme).
func hostName(h string) bool {
	if h == "" || len(h) > 253 || strings.HasPrefix(h, ".") || strings.HasPrefix(h, "-") {
		return false
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// validateHost checks [host]: a rate (0: derived) and a burst of at
// least one datagram (0: derived).
func (c *Config) validateHost(errs *Errors) {
	h := c.Host
	if h.PerIPRate < 0 {
		errs.Add("host.per_ip_rate", "want a rate in bytes per second (0: %d times [limits] per_ip_rate), got %d", responder.HostFactor, h.PerIPRate)
	}
	if h.PerIPBurst != 0 && h.PerIPBurst < 1500 {
		errs.Add("host.per_ip_burst", "must be at least 1500 bytes (one full datagram), or 0 (%d times [limits] per_ip_burst)", responder.HostFactor)
	}
}

// validateServers checks [servers] include: at most MaxIncludes globs, each
// well formed, with wildcards only in the file name, so that each is one
// folder read (no walk of a tree, however large).
func (c *Config) validateServers(errs *Errors) {
	inc := c.Servers.Include
	if len(inc) > MaxIncludes {
		errs.Add("servers.include", "at most %d patterns, got %d", MaxIncludes, len(inc))
		return
	}
	for i, p := range inc {
		key := fmt.Sprintf("servers.include[%d]", i)
		if p == "" {
			errs.Add(key, "want a glob of server files such as \"servers.d/*.toml\", got \"\"")
			continue
		}
		if strings.ContainsRune(p, 0) {
			errs.Add(key, "want a glob of server files, got %q (a NUL byte)", p)
			continue
		}
		if _, err := filepath.Match(p, ""); err != nil {
			errs.Add(key, "want a glob of server files such as \"servers.d/*.toml\", got %q: %v", p, err)
			continue
		}
		if dir := filepath.Dir(p); strings.ContainsAny(dir, globMeta()) {
			errs.Add(key, "want wildcards only in the file name (one folder of server files, read once), such as \"servers.d/*.toml\", got %q", p)
		}
	}
}
