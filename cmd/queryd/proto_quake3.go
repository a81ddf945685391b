package main

import (
	"context"
	"fmt"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/quake3"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/wire"
)

// buildQuake3 makes the getinfo / getstatus handler.
func buildQuake3(c *config.Config, d deps) (protocol, error) {
	q := c.Quake3
	if !q.Enabled {
		return nil, nil
	}
	var extra []quake3.KeyValue
	for _, kv := range q.InfoKeys() {
		extra = append(extra, quake3.KeyValue{Key: kv[0], Value: kv[1]})
	}
	rate := q.PacketRate
	if rate == 0 {
		rate = -1 // [quake3] packet_rate = 0 turns the limit off
	}
	h := quake3.NewHandler(quake3.Config{
		GameName: q.GameName,
		Protocol: q.Protocol,
		GameType: q.GameType,
		Extra:    extra,
	}, rate, q.PacketBurst)
	return &quake3Proto{Handler: h}, nil
}

// quake3Proto is the Quake 3 handler plus the count of masters' getinfo
// answered: the heartbeat service tells it the masters' addresses.
type quake3Proto struct {
	*quake3.Handler
	watch atomic.Pointer[masterWatch]
}

// Serve answers like quake3.Handler and counts a master's challenged getinfo.
func (p *quake3Proto) Serve(req []byte, src netip.AddrPort, scratch []byte, out [][]byte) ([][]byte, wire.Outcome) {
	out, outcome := p.Handler.Serve(req, src, scratch, out)
	if w := p.watch.Load(); w != nil && outcome == wire.AnsweredOpen && w.isMaster(src.Addr()) {
		if r, err := quake3.ParseRequest(req); err == nil && r.Type == quake3.TypeInfo && r.Challenge != nil {
			w.answered.Inc()
		}
	}
	return out, outcome
}

// masterWatch is the masters' last resolved addresses and the count of their
// getinfo queryd answered.
type masterWatch struct {
	addrs    atomic.Pointer[[]netip.Addr]
	answered prometheus.Counter
}

func (w *masterWatch) isMaster(a netip.Addr) bool {
	p := w.addrs.Load()
	if p == nil {
		return false
	}
	a = a.Unmap()
	for _, m := range *p {
		if m == a {
			return true
		}
	}
	return false
}

// servicesQuake3 returns the heartbeat service (when masters are configured)
// and the relay's closer (in relay mode).
func servicesQuake3(c *config.Config, d *daemon) ([]service, error) {
	var out []service
	if d.relay != nil {
		out = append(out, closer{d.relay.Close})
	}
	if len(c.Quake3.Masters) > 0 {
		hb, err := newHeartbeats(c.Quake3.Masters, d)
		if err != nil {
			return nil, err
		}
		out = append(out, hb)
	}
	return out, nil
}

// closer is a service that only needs closing.
type closer struct{ close func() error }

func (c closer) Start() error { return nil }
func (c closer) Close() error { return c.close() }

// startRelay makes the relay when [relay] upstream is set, and returns it as
// the responder's Forwarder (nil when relay mode is off).
func (d *daemon) startRelay() (responder.Forwarder, error) {
	rc := d.cfg.Relay
	if rc.Upstream == "" {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	up, err := d.cfg.RelayUpstream(ctx) // refuses an upstream that loops back to queryd
	cancel()
	if err != nil {
		return nil, err
	}
	r, err := responder.NewRelay(responder.RelayConfig{
		Upstream:    up,
		IdleTimeout: rc.Idle(),
		MaxSessions: rc.Sessions(),
		MaxPerIP:    rc.MaxSessionsPerIP,
		OpenRate:    openRate(rc.OpenRate),
		OpenBurst:   rc.OpenBurst,
		Logger:      d.log.With("part", "relay"),
		Registry:    d.reg,
	})
	if err != nil {
		return nil, err
	}
	d.relay = r
	d.log.Info("relay mode", "upstream", r.Upstream())
	return r, nil
}

// openRate maps [relay] open_rate to the relay's: 0 (no limit) becomes -1.
func openRate(perSec float64) float64 {
	if perSec == 0 {
		return -1
	}
	return perSec
}

// peerFunc answers the feed's {"op":"peer","port":N} in relay mode (nil
// when relay mode is off: the feed then says so).
func (d *daemon) peerFunc() func(port int) (string, error) {
	if d.cfg.Relay.Upstream == "" {
		return nil
	}
	return func(port int) (string, error) {
		if d.relay == nil {
			return "", fmt.Errorf("relay not started")
		}
		ap, err := d.relay.Peer(port)
		if err != nil {
			return "", err
		}
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()).String(), nil
	}
}

// queryQuake3 asks a server getinfo and getstatus.
func queryQuake3(addr string, q queryOpts) (any, error) {
	c, err := quake3.Dial(addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.Timeout = q.timeout
	info, err := c.Info()
	if err != nil {
		return nil, fmt.Errorf("getinfo: %w", err)
	}
	st, err := c.Status()
	if err != nil {
		return nil, fmt.Errorf("getstatus: %w", err)
	}
	return map[string]any{
		"info":    info.Values,
		"status":  st.Info.Values,
		"players": st.Players,
	}, nil
}
