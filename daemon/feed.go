package daemon

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"time"

	"github.com/queryd/queryd/feed"
)

// newFeed creates the feed socket (in queryd's own private folder when the
// path is the default one).
func (s *Server) newFeed() (part, error) {
	c := s.cfg
	sock := c.FeedSocket()
	if c.Feed.Socket == "" {
		// The default folder may be in /tmp: make it, or refuse one that
		// another user could have made to take the socket over.
		if err := feed.PrivateDir(filepath.Dir(sock)); err != nil {
			return nil, err
		}
	}
	f, err := feed.Listen(feed.Config{
		Socket:      sock,
		Mode:        c.Feed.Mode,
		Group:       c.Feed.Group,
		StaleAfter:  time.Duration(c.Feed.StaleAfter),
		MaxConns:    c.Feed.MaxConns,
		MaxBuffered: int64(c.Feed.MaxBuffered),
		LineTimeout: time.Duration(c.Feed.LineTimeout),
		Peer:        s.peerFunc(),
		Wake:        s.wakeFunc(),
		Rest:        s.rest,
		Logger:      s.log.With("part", "feed"),
	}, s.store)
	if err != nil {
		return nil, err
	}
	s.feed = f
	return funcPart{name: "feed", serve: f.Serve, stop: f.Close}, nil
}

// peerFunc answers the feed's {"op":"peer","port":N,"addr":"IP"} in relay
// mode (nil when relay mode is off: the feed then says so).
func (s *Server) peerFunc() func(port int, addr netip.Addr) (string, string, error) {
	if s.cfg.Relay.GameServer == "" {
		return nil
	}
	return func(port int, addr netip.Addr) (string, string, error) {
		if s.relay == nil {
			return "", "", fmt.Errorf("relay not started")
		}
		ap, local, err := s.relay.Peer(port, addr)
		if err != nil {
			return "", "", err
		}
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()).String(), local.String(), nil
	}
}
