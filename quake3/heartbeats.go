package quake3

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/state"
)

// The names of the heartbeat metrics, for the packages that read them (the
// status page's heartbeat card); docs/metrics.md describes each.
const (
	MetricHeartbeats      = "queryd_quake3_heartbeats_total" // {kind: heartbeat, flatline}
	MetricHeartbeatErrors = "queryd_quake3_heartbeat_errors_total"
	MetricMasterGetinfo   = "queryd_quake3_master_getinfo_total"
)

// heartbeats announces the server to the [[quake3.masters]] from the public
// UDP socket (so each master's getinfo comes back to queryd): at start, every
// HeartbeatInterval, and at once when the server becomes empty, non-empty,
// full or not full. It sends each master's flatline (if any) when the server
// goes down and on shutdown, and heartbeats again when it comes back. Down
// means queryd is silent (env.Silent: the feed, or the [upstream] game
// server, quiet for stale_after); or, in relay mode with the Quake 3 handler off
// (the masters' getinfo go to the game server), that the game server does
// not answer getinfo (probe.go).
type heartbeats struct {
	masters  []Master
	env      module.Env
	current  func() module.Protocol // the live Quake 3 handler (a reload may replace it)
	log      *slog.Logger
	interval time.Duration // quake3.HeartbeatInterval; shorter in tests
	poll     time.Duration // how often the feed's staleness is checked
	resolve  func(ctx context.Context, host string) ([]netip.Addr, error)
	watch    *masterWatch
	sent     *prometheus.CounterVec // by kind: heartbeat, flatline
	failed   prometheus.Counter
	probes   *prometheus.CounterVec // game server probes, by result: answered, silent

	probe      probeTiming
	probedAt   time.Time // the last probe's end (the loop's goroutine only)
	upstreamUp bool      // what the last probe said

	fill atomic.Int32 // quake3.Fill of the last snapshot
	kick chan struct{}
}

func newHeartbeats(masters []Master, env module.Env, current func() module.Protocol) (*heartbeats, error) {
	h := &heartbeats{
		masters:  masters,
		env:      env,
		current:  current,
		log:      env.Log.With("part", "heartbeat"),
		interval: HeartbeatInterval,
		poll:     250 * time.Millisecond,
		resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		},
		watch: &masterWatch{answered: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricMasterGetinfo,
			Help: "getinfo requests with a challenge from a master's address that queryd answered.",
		})},
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricHeartbeats,
			Help: "Heartbeat datagrams sent to masters, by kind (heartbeat, flatline).",
		}, []string{"kind"}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricHeartbeatErrors,
			Help: "Heartbeats not sent: the master's name did not resolve or the socket refused.",
		}),
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "queryd_quake3_upstream_probes_total",
			Help: "getinfo probes of the game server (relay mode, [quake3] off) before heartbeats, by result (answered, silent).",
		}, []string{"result"}),
		probe: defaultProbe,
		kick:  make(chan struct{}, 1),
	}
	for _, c := range []prometheus.Collector{h.watch.answered, h.sent, h.failed, h.probes} {
		if err := env.Registry.Register(c); err != nil {
			return nil, fmt.Errorf("heartbeat metrics: %w", err)
		}
	}
	for _, r := range []string{"answered", "silent"} {
		h.probes.WithLabelValues(r) // at 0 from the start, for rate() and alerts
	}
	return h, nil
}

// Name is the service's label in logs.
func (h *heartbeats) Name() string { return "quake3-heartbeats" }

// Serve sends the first heartbeat, heartbeats until ctx is done, then sends
// the flatlines (unless the server was already down).
func (h *heartbeats) Serve(ctx context.Context) error {
	first := true
	unsub := h.env.Subscribe(func(s *state.Snapshot) {
		f := int32(FillOf(s))
		if old := h.fill.Swap(f); old != f && !first {
			select {
			case h.kick <- struct{}{}:
			default:
			}
		}
		first = false
	})
	defer unsub()
	h.loop(ctx)
	return nil
}

// loop heartbeats while the server is up (alive): at start, on every tick
// and kick, and when it comes back; it flatlines when the server goes down
// and at the end, if the masters' last word from queryd was a heartbeat.
func (h *heartbeats) loop(ctx context.Context) {
	tick := time.NewTicker(h.interval)
	defer tick.Stop()
	poll := time.NewTicker(h.poll)
	defer poll.Stop()
	live := false // the masters' last word from queryd was a heartbeat
	beat, first := true, true
	recheck := true // check before the beat (not when a check just said up)
	for {
		if beat && ctx.Err() == nil {
			up := h.alive(ctx, recheck)
			switch {
			case ctx.Err() != nil: // stopped while probing: the select ends it
			case up:
				h.sendAll(false)
				live = true
			case live:
				h.down()
				live = false
			case first:
				h.log.Warn(h.downReason() + ": no heartbeat until it is up")
			default:
				h.log.Debug(h.downReason() + ": no heartbeat")
			}
			first, recheck = false, true
			tick.Reset(h.interval)
		}
		beat = false
		select {
		case <-tick.C:
			beat = true
		case <-h.kick:
			beat = true
		case <-poll.C:
			// A reload may have replaced the handler: hand it the watch now,
			// not only at the next heartbeat (up to 5 minutes away).
			h.linkWatch()
			up := h.alive(ctx, false)
			switch {
			case ctx.Err() != nil:
			case !up && live:
				h.down()
				live = false
			case up && !live:
				h.log.Info("the server is up again: heartbeats resume")
				beat, recheck = true, false
			}
		case <-ctx.Done():
			if live {
				h.sendAll(true)
			}
			return
		}
	}
}

// down tells the masters that have a flatline that the server went down.
func (h *heartbeats) down() {
	h.log.Warn(h.downReason() + ": flatline to the masters")
	h.sendAll(true)
}

// downReason says why the server counts as down.
func (h *heartbeats) downReason() string {
	if h.probing() {
		return "the game server " + h.env.RelayGameServer.String() + " does not answer getinfo"
	}
	return "queryd is silent (the feed or the [upstream] game server quiet for stale_after)"
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
		to, err := h.sendFirst(dsts[i], Heartbeat(name))
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
		if last = h.env.SendTo(msg, dst); last == nil {
			return dst, nil
		}
	}
	return netip.AddrPort{}, last
}

// linkWatch hands the master watch to the live Quake 3 handler (which a
// SIGHUP may have replaced) so that it counts the masters' getinfo.
func (h *heartbeats) linkWatch() {
	if p, ok := h.current().(*Protocol); ok {
		p.watch.Store(h.watch)
	}
}
