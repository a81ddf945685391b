package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/quake3"
	"github.com/queryd/queryd/state"
)

// heartbeats announces the server to the [[quake3.masters]] from the public
// UDP socket (so each master's getinfo comes back to queryd): at start, every
// HeartbeatInterval, and at once when the server becomes empty, non-empty,
// full or not full. It sends each master's flatline (if any) when the feed
// goes stale and on shutdown, and heartbeats again when the feed comes back.
type heartbeats struct {
	masters  []config.Master
	d        *daemon
	log      *slog.Logger
	interval time.Duration // quake3.HeartbeatInterval; shorter in tests
	poll     time.Duration // how often the feed's staleness is checked
	resolve  func(ctx context.Context, host string) ([]netip.Addr, error)
	watch    *masterWatch
	sent     *prometheus.CounterVec // by kind: heartbeat, flatline
	failed   prometheus.Counter

	fill    atomic.Int32 // quake3.Fill of the last snapshot
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	unsub   func()
	stopped sync.Once
}

func newHeartbeats(masters []config.Master, d *daemon) (*heartbeats, error) {
	h := &heartbeats{
		masters:  masters,
		d:        d,
		log:      d.log.With("part", "heartbeat"),
		interval: quake3.HeartbeatInterval,
		poll:     250 * time.Millisecond,
		resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		},
		watch: &masterWatch{answered: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "queryd_quake3_master_getinfo_total",
			Help: "getinfo requests with a challenge from a master's address that queryd answered.",
		})},
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "queryd_quake3_heartbeats_total",
			Help: "Heartbeat datagrams sent to masters, by kind (heartbeat, flatline).",
		}, []string{"kind"}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "queryd_quake3_heartbeat_errors_total",
			Help: "Heartbeats not sent: the master's name did not resolve or the socket refused.",
		}),
		kick: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	for _, c := range []prometheus.Collector{h.watch.answered, h.sent, h.failed} {
		if err := d.reg.Register(c); err != nil {
			return nil, fmt.Errorf("heartbeat metrics: %w", err)
		}
	}
	return h, nil
}

// Start subscribes to the state and sends the first heartbeat.
func (h *heartbeats) Start() error {
	first := true
	h.unsub = h.d.store.Subscribe(func(s *state.Snapshot) {
		f := int32(quake3.FillOf(s))
		if old := h.fill.Swap(f); old != f && !first {
			select {
			case h.kick <- struct{}{}:
			default:
			}
		}
		first = false
	})
	go h.loop()
	return nil
}

// Close sends the flatlines (unless the stale feed already did) and stops.
func (h *heartbeats) Close() error {
	h.stopped.Do(func() {
		close(h.stop)
		<-h.done
		if h.unsub != nil {
			h.unsub()
		}
	})
	return nil
}

func (h *heartbeats) loop() {
	defer close(h.done)
	tick := time.NewTicker(h.interval)
	defer tick.Stop()
	poll := time.NewTicker(h.poll)
	defer poll.Stop()
	beat, flat := true, false
	for {
		if beat && !flat {
			h.sendAll(false)
			tick.Reset(h.interval)
		}
		beat = false
		select {
		case <-tick.C:
			beat = true
		case <-h.kick:
			beat = true
		case <-poll.C:
			stale := h.d.feed.Stale(time.Now())
			if stale && !flat {
				h.log.Info("feed stale: flatline to the masters")
				h.sendAll(true)
			}
			beat = flat && !stale
			flat = stale
		case <-h.stop:
			if !flat {
				h.sendAll(true)
			}
			return
		}
	}
}

// sendAll sends every master its heartbeat (or flatline, for those that
// have one), resolving its name anew. The masters' addresses are handed to
// the master watch before anything is sent, so that their getinfo counts.
func (h *heartbeats) sendAll(flatline bool) {
	h.linkWatch()
	kind := "heartbeat"
	if flatline {
		kind = "flatline"
	}
	dsts := make([][]netip.AddrPort, len(h.masters))
	var ips []netip.Addr
	for i, m := range h.masters {
		if flatline && m.Flatline == "" {
			continue
		}
		var err error
		if dsts[i], err = h.resolveMaster(m.Address); err != nil {
			h.failed.Inc()
			h.log.Warn("master not resolved", "master", m.Address, "err", err)
		}
		for _, d := range dsts[i] {
			ips = append(ips, d.Addr())
		}
	}
	if !flatline {
		h.watch.addrs.Store(&ips)
	}
	for i, m := range h.masters {
		name := m.Heartbeat
		if flatline {
			name = m.Flatline
		}
		if name == "" || len(dsts[i]) == 0 {
			continue
		}
		to, err := h.sendFirst(dsts[i], quake3.Heartbeat(name))
		if err != nil {
			h.failed.Inc()
			h.log.Warn("heartbeat not sent", "master", m.Address, "err", err)
			continue
		}
		h.sent.WithLabelValues(kind).Inc()
		h.log.Debug("heartbeat sent", "master", m.Address, "to", to, "name", name)
	}
}

// resolveMaster resolves a master's "host:port".
func (h *heartbeats) resolveMaster(address string) ([]netip.AddrPort, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("port %q: %w", portStr, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	ips, err := h.resolve(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	out := make([]netip.AddrPort, 0, len(ips))
	for _, ip := range ips {
		out = append(out, netip.AddrPortFrom(ip.Unmap(), uint16(port)))
	}
	return out, nil
}

// sendFirst sends msg to the first address a public socket accepts.
func (h *heartbeats) sendFirst(dsts []netip.AddrPort, msg []byte) (netip.AddrPort, error) {
	var last error
	for _, dst := range dsts {
		if last = h.d.udp.SendTo(msg, dst); last == nil {
			return dst, nil
		}
	}
	return netip.AddrPort{}, last
}

// linkWatch hands the master watch to the live Quake 3 handler (which a
// SIGHUP may have replaced) so that it counts the masters' getinfo.
func (h *heartbeats) linkWatch() {
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	for _, p := range h.d.protos {
		if q, ok := p.(*quake3Proto); ok {
			q.watch.Store(h.watch)
		}
	}
}
