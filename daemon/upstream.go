package daemon

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/upstream"
)

// newUpstream makes the poller of the game server queryd takes the state
// from when [upstream] is on (nil otherwise): its answers are the store's
// upstream layer, between [server] and the feed.
func (s *Server) newUpstream() (part, error) {
	c := s.cfg
	u := c.Upstream
	if !u.On() {
		return nil, nil
	}
	var addr netip.AddrPort
	if u.Address == "" && s.relay != nil {
		addr = s.relay.GameServer() // [relay] upstream, resolved and checked
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var err error
		if addr, err = c.UpstreamAddr(ctx); err != nil {
			return nil, err
		}
	}
	poller := s.host.poller(string(u.Protocol))
	if poller == nil { // config.Parse checked the name against the same modules
		return nil, fmt.Errorf("[upstream] protocol %q: no module can poll in it", u.Protocol)
	}
	p, err := upstream.New(upstream.Config{
		Protocol:    poller,
		Address:     addr,
		Interval:    time.Duration(u.Interval),
		Timeout:     time.Duration(u.Timeout),
		StaleAfter:  time.Duration(c.Feed.StaleAfter),
		OwnGamePort: s.relay != nil,
		Publish: func(doc map[string]any) error {
			_, err := s.store.SetGameServer(doc)
			return err
		},
		Rest:     s.rest,
		Logger:   s.log.With("part", "upstream"),
		Registry: s.reg,
	})
	if err != nil {
		return nil, err
	}
	s.upstream = p
	return p, nil
}

// poller returns the module named name if it can poll a game server.
func (d *Daemon) poller(name string) module.Poller {
	for _, m := range d.opts.Modules {
		if p, ok := m.(module.Poller); ok && m.Name() == name {
			return p
		}
	}
	return nil
}

var _ part = (*upstream.Poller)(nil)
