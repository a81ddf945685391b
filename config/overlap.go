package config

import (
	"fmt"
	"net/netip"
	"path/filepath"
)

// Bind is one address a server listens on, with the key that sets it.
type Bind struct {
	Key     string // "listen.udp[0]", "sagl.http"
	Network string // "udp" or "tcp"
	Addr    netip.AddrPort
}

// Binder is a Section whose service listens on addresses of its own
// besides [listen] udp (an HTTP listener): in host mode two servers may not
// listen on the same one.
type Binder interface {
	// Binds returns the addresses the section listens on (none when off).
	Binds() []Bind
}

// Binds returns every address the server c listens on or takes: [listen]
// udp, [listen] divert (the stock game server's port, whose queries the
// server takes: no other server may divert or listen on it), [feed] http
// and the modules' (Binder).
func (c *Config) Binds() []Bind {
	var bs []Bind
	for i, ap := range c.Listen.UDP {
		bs = append(bs, Bind{Key: fmt.Sprintf("listen.udp[%d]", i), Network: "udp", Addr: ap})
	}
	for i, ap := range c.Listen.Divert {
		bs = append(bs, Bind{Key: fmt.Sprintf("listen.divert[%d]", i), Network: "udp", Addr: ap})
	}
	if c.Feed.HTTP.IsValid() {
		bs = append(bs, Bind{Key: "feed.http", Network: "tcp", Addr: c.Feed.HTTP})
	}
	for _, s := range c.Modules {
		if b, ok := s.Section.(Binder); ok {
			bs = append(bs, b.Binds()...)
		}
	}
	return bs
}

// claim is an address, or a feed socket (Network "unix"), a file of the
// host holds.
type claim struct {
	Bind
	socket string // the feed socket's path, for Network "unix"
	path   string // the file
	server string // the server that holds it ("" for the host's own: [admin] listen)
}

// claim records the addresses and the feed socket of server name (its
// config c, its file path).
func (b *hostBuilder) claim(c *Config, path, name string) {
	for _, bd := range c.Binds() {
		b.claims = append(b.claims, claim{Bind: bd, path: path, server: name})
	}
	b.claims = append(b.claims, claim{Bind: Bind{Key: "feed.socket", Network: "unix"}, socket: filepath.Clean(c.FeedSocket()), path: path, server: name})
}

// overlap returns the errors of server name (its config c, file path)
// whose addresses or feed socket another server of the host holds (what
// runs, then the files before it), each naming both files; what the server
// itself holds while it runs does not count.
func (b *hostBuilder) overlap(c *Config, path, name string) Errors {
	var errs Errors
	for _, bd := range c.Binds() {
		for _, o := range b.claims {
			if o.server != name && o.Network == bd.Network && Overlaps(o.Addr, bd.Addr) {
				errs.Add(bd.Key, "%s %s overlaps %s %s of %s: two servers cannot listen on one address", bd.Network, bd.Addr, o.Network, o.Addr, o.where())
				break
			}
		}
	}
	sock := filepath.Clean(c.FeedSocket())
	for _, o := range b.claims {
		if o.server != name && o.Network == "unix" && o.socket == sock {
			errs.Add("feed.socket", "the feed socket %s is %s's too: each server needs its own (leave socket empty for NAME.sock beside the default)", sock, fileLabel(o.path))
			break
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// where names a claim's key, file and server.
func (o claim) where() string {
	if o.server == "" {
		return o.Key + " in " + fileLabel(o.path)
	}
	return fmt.Sprintf("%s in %s (server %q)", o.Key, fileLabel(o.path), o.server)
}

// Overlaps reports whether two listening addresses take the same port:
// equal addresses, or a wildcard and an address it covers ("0.0.0.0" covers
// IPv4; "[::]" covers everything, as without IPV6_V6ONLY). Port 0 (any
// free port) overlaps nothing.
func Overlaps(a, b netip.AddrPort) bool {
	if a.Port() != b.Port() || a.Port() == 0 {
		return false
	}
	x, y := a.Addr().Unmap(), b.Addr().Unmap()
	switch {
	case x == y:
		return true
	case x.Is6() && x.IsUnspecified(), y.Is6() && y.IsUnspecified():
		return true
	case x.IsUnspecified():
		return y.Is4()
	case y.IsUnspecified():
		return x.Is4()
	}
	return false
}
