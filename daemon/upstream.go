package daemon

import (
	"context"
	"net/netip"
	"time"

	"github.com/queryd/queryd/upstream"
)

// newUpstream makes the poller of the game server queryd takes the state
// from when [upstream] is on (nil otherwise): its answers are the store's
// upstream layer, between [server] and the feed.
func (d *Daemon) newUpstream() (part, error) {
	c := d.cfg
	u := c.Upstream
	if !u.On() {
		return nil, nil
	}
	var addr netip.AddrPort
	if u.Address == "" && d.relay != nil {
		addr = d.relay.Upstream() // [relay] upstream, resolved and checked
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var err error
		if addr, err = c.UpstreamAddr(ctx); err != nil {
			return nil, err
		}
	}
	p, err := upstream.New(upstream.Config{
		Protocol:    string(u.Protocol),
		Address:     addr.String(),
		Interval:    time.Duration(u.Interval),
		Timeout:     time.Duration(u.Timeout),
		StaleAfter:  time.Duration(c.Feed.StaleAfter),
		OwnGamePort: d.relay != nil,
		Publish: func(doc map[string]any) error {
			_, err := d.store.SetUpstream(doc)
			return err
		},
		Logger:   d.log.With("part", "upstream"),
		Registry: d.reg,
	})
	if err != nil {
		return nil, err
	}
	d.upstream = p
	return p, nil
}

var _ part = (*upstream.Poller)(nil)
