package quake3

import (
	"context"
	"fmt"
	"net/netip"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/module"
)

// Name is the protocol's name, written once: its config table [quake3], the
// protocol label of its metrics and its `queryd query -proto` value.
const Name = "quake3"

// Module is the Quake 3 / Enemy Territory protocol module: its [quake3]
// section, its handler, the master heartbeats, and its client for
// `queryd query`.
type Module struct{}

// Name returns Name.
func (Module) Name() string { return Name }

// Claims reports whether a datagram is one of the protocol's queries, with
// the protocol on or off (the daemon's Claimer capability: a query never
// wakes a sleeping server, [sleep]).
func (Module) Claims(p []byte) bool { return Claims(p) }

// NewSection returns [quake3] with its defaults.
func (Module) NewSection() config.Section { return NewSection() }

// Build makes the getinfo / getstatus handler for [quake3].
func (Module) Build(sec config.Section, env module.Env) (module.Protocol, error) {
	s := sec.(*Section)
	h := NewHandler(Config{
		GameName: s.GameName,
		Protocol: s.Protocol,
		GameType: s.GameType,
		Extra:    s.InfoKeys(),
	}, s.PacketRate, s.PacketBurst)
	return &Protocol{Handler: h}, nil
}

// Services returns the master heartbeats when [[quake3.masters]] are set
// and something answers the masters' getinfo: the Quake 3 handler, or in
// relay mode the game server (then, with [quake3] off, the heartbeats
// probe it: probe.go).
func (Module) Services(sec config.Section, env module.Env, current func() module.Protocol) ([]module.Service, error) {
	s := sec.(*Section)
	if len(s.Masters) == 0 || (!s.Enabled && !env.RelayGameServer.IsValid()) {
		return nil, nil
	}
	hb, err := newHeartbeats(s.Masters, env, current)
	if err != nil {
		return nil, err
	}
	return []module.Service{hb}, nil
}

// Protocol is the Quake 3 handler plus the count of masters' getinfo it
// answered: the heartbeat service tells it the masters' addresses.
type Protocol struct {
	*Handler
	watch atomic.Pointer[masterWatch]
}

// Answer answers like Handler and counts a master's challenged getinfo.
func (p *Protocol) Answer(req []byte, src netip.AddrPort, scratch []byte, out [][]byte) ([][]byte, dgram.Outcome) {
	out, outcome := p.Handler.Answer(req, src, scratch, out)
	if w := p.watch.Load(); w != nil && outcome == dgram.AnsweredOpen && w.isMaster(src.Addr()) {
		if r, err := ParseRequest(req); err == nil && r.Type == TypeInfo && r.Challenge != nil {
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

// HeartbeatMetrics names the master heartbeats' metrics for the status
// page's heartbeats card (the daemon's Heartbeater capability).
func (Module) HeartbeatMetrics() module.HeartbeatMetrics {
	return module.HeartbeatMetrics{Sent: MetricHeartbeats, Errors: MetricHeartbeatErrors, Getinfo: MetricMasterGetinfo}
}

// Probe is getinfo with a challenge: Quake 3 has no challenge round trip.
func (Module) Probe() module.Probe {
	return module.Probe{
		Request:   []byte("\xFF\xFF\xFF\xFFgetinfo queryd-probe"),
		Reply:     func(p []byte) bool { return len(p) >= 16 && string(p[:16]) == "\xFF\xFF\xFF\xFFinfoResponse" },
		Challenge: func([]byte) bool { return false },
		Rate:      probeRate,
	}
}

// probeRate is the packet rate in words, for a script that polls too fast.
var probeRate = fmt.Sprintf("Quake 3 servers (ioquake3; queryd by default) answer an address %d requests at once, then %g a second, "+
	"and a query takes 2 or 3: poll every few seconds ([quake3] packet_rate)", DefaultPacketBurst, DefaultPacketRate)

// Query asks addr getinfo and getstatus; each request may take opts.Steps
// (else the context's deadline).
func (Module) Query(ctx context.Context, addr string, opts module.QueryOptions) (module.Answer, error) {
	c, err := Dial(addr)
	if err != nil {
		return module.Answer{}, err
	}
	defer c.Close()
	c.Timeout = module.StepTimeout(ctx, opts)
	info, err := c.Info()
	if err != nil {
		return module.Answer{}, module.Step(0, "getinfo", err)
	}
	st, err := c.Status()
	if err != nil {
		return module.Answer{}, module.Step(1, "getstatus", err)
	}
	sum := module.Summary{
		Name:       info.Values["hostname"],
		Map:        info.Values["mapname"],
		Players:    module.Count(info.Values["clients"]),
		MaxPlayers: module.Count(info.Values["sv_maxclients"]),
	}
	if sum.Players == nil {
		sum.Players = module.IntPtr(len(st.Players))
	}
	return module.Answer{
		Summary: sum,
		Full:    map[string]any{"info": info.Values, "status": st.Info.Values, "players": st.Players},
	}, nil
}

var (
	_ module.Protocol = (*Protocol)(nil)
	_ module.Service  = (*heartbeats)(nil)
)

// The responder finds the packet rate by a type assertion on the handler it
// is given: a changed signature would turn the rate off silently.
var _ dgram.PacketLimited = (*Protocol)(nil)
