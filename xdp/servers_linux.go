//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"net/netip"
	"slices"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/responder"
)

// maxServers is the program's MAX_SERVERS (bpf/consts.h): the size of its
// per-server tables, config.MaxServers.
const maxServers = int(querydServerLimitMAX_SERVERS)

// server is one game server's share of the program: its index into the
// per-server tables and what the program holds for it.
type server struct {
	index  uint32
	cfg    Server
	protos atomic.Pointer[[]module.Protocol]
	limits atomic.Pointer[responder.Limits]
	deny   atomic.Pointer[responder.Deny]
	dirty  atomic.Bool // Changed: publish at the next kick
	coll   serverCollector
	// provenSeed keys its sources' places in the proven table (random per
	// server: a server that takes a removed one's index finds none of its
	// marks)
	provenSeed uint64

	// under FastPath.mu
	last     []querydReply // the replies published last, by slot
	lastCfg  querydConfig
	lastDeny map[querydSrvdenykey]bool
	denyFull bool // its deny list did not fit the program's trie: it passes all its queries
	updates  uint64
	pending  []responder.SourceCount // drained from the budget entries and the sources map, not yet taken
}

// checkServers refuses more servers than the program's tables hold, a
// server without a name and two with the same one.
func checkServers(ss []Server) error {
	if len(ss) > maxServers {
		return fmt.Errorf("%d servers, the XDP program answers for at most %d", len(ss), maxServers)
	}
	seen := map[string]bool{}
	for _, s := range ss {
		if s.Name == "" {
			return errors.New("a server without a name")
		}
		if seen[s.Name] {
			return fmt.Errorf("two servers named %q", s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}

// SetServers makes ss the servers the program answers for (at start and on
// SIGHUP), matched by Name: a new one gets a free index and its own
// tables, a removed one's frames pass to the socket path (its tables are
// cleared and its series unregistered), a kept one takes the new listen
// addresses, limits, deny list, silence and registry. Protocols are set
// apart (SetProtocols).
func (f *FastPath) SetServers(ss []Server) error {
	if err := checkServers(ss); err != nil {
		return err
	}
	want := map[string]Server{}
	for _, s := range ss {
		want[s.Name] = s
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return errors.New("the fast path is closed")
	}
	var errs []error
	f.drainLocked() // the sources counted so far go to the servers that answered them
	for name, s := range f.servers {
		if _, ok := want[name]; !ok {
			errs = append(errs, f.removeLocked(s))
		}
	}
	var fresh []*server
	for _, c := range ss {
		s := f.servers[c.Name]
		if s == nil {
			seed, err := newProvenSeed()
			if err != nil {
				errs = append(errs, fmt.Errorf("server %s: %w", c.Name, err))
				continue
			}
			s = &server{index: f.freeIndexLocked(), lastDeny: map[querydSrvdenykey]bool{}, provenSeed: seed}
			s.coll = serverCollector{f: f, s: s}
			f.servers[c.Name] = s
			f.byIndex[s.index] = s
			fresh = append(fresh, s)
		} else if s.cfg.Registry != c.Registry {
			if s.cfg.Registry != nil {
				s.cfg.Registry.Unregister(s.coll)
			}
			fresh = append(fresh, s)
		}
		s.cfg = c
		l := c.Limits
		s.limits.Store(&l)
		s.deny.Store(c.Deny)
	}
	errs = append(errs, f.syncDestsLocked())
	f.mu.Unlock()
	for _, s := range fresh {
		if s.cfg.Registry != nil {
			if err := s.cfg.Registry.Register(s.coll); err != nil {
				errs = append(errs, fmt.Errorf("server %s: metrics: %w", s.cfg.Name, err))
			}
		}
	}
	for _, c := range ss {
		f.mu.Lock()
		s := f.servers[c.Name]
		f.mu.Unlock()
		if s != nil {
			errs = append(errs, f.syncDeny(s), f.syncConfig(s))
			s.dirty.Store(true)
		}
	}
	f.kickServe()
	return errors.Join(errs...)
}

// freeIndexLocked is the lowest index no server holds (SetServers checked
// that there is one).
func (f *FastPath) freeIndexLocked() uint32 {
	for i, s := range f.byIndex {
		if s == nil {
			return uint32(i)
		}
	}
	panic("xdp: no free server index") // checkServers bounds the servers
}

// removeLocked stops answering for s: its destinations go with the next
// syncDestsLocked, its config is disabled, its replies, deny list and
// counters cleared, its series unregistered.
func (f *FastPath) removeLocked(s *server) error {
	delete(f.servers, s.cfg.Name)
	f.byIndex[s.index] = nil
	f.divertRemoved(s.cfg.Name) // its queries reach its game server again
	var errs []error
	if err := f.maps.ConfigMap.Put(s.index, &querydConfig{}); err != nil {
		errs = append(errs, fmt.Errorf("server %s: config: %w", s.cfg.Name, err))
	}
	if err := f.maps.Replies.Delete(s.index); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		errs = append(errs, fmt.Errorf("server %s: replies: %w", s.cfg.Name, err))
	}
	for k := range s.lastDeny {
		errs = append(errs, f.maps.Deny.Delete(k))
	}
	zero := make([]querydStats, f.ncpu)
	errs = append(errs, f.maps.StatsMap.Put(s.index, zero))
	unp := make([]uint64, f.ncpu)
	errs = append(errs, f.maps.Unproven.Put(s.index, unp))
	errs = append(errs, f.maps.UnprovenGate.Put(s.index, unp))
	if s.cfg.Registry != nil {
		s.cfg.Registry.Unregister(s.coll)
	}
	return errors.Join(errs...)
}

// lookup is the server named name, or nil.
func (f *FastPath) lookup(name string) *server {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.servers[name]
}

// SetProtocols makes ps the protocols whose replies the program sends for
// server (at start and on reload); it does not re-attach.
func (f *FastPath) SetProtocols(server string, ps []module.Protocol) {
	if s := f.lookup(server); s != nil {
		ps = append([]module.Protocol(nil), ps...)
		for _, p := range ps {
			if err := f.list.check(p); err != nil {
				f.log.Warn("XDP: the program does not answer all of a protocol's fast queries; the socket path answers the rest", "server", server, "err", err)
			}
		}
		s.protos.Store(&ps)
		if err := f.divertProtocols(server, ps); err != nil {
			f.log.Warn("divert: the protocols could not be written", "server", server, "err", err)
		}
		f.changed(s)
	}
}

// SetDeny replaces a server's [limits] deny list (on reload): the socket
// path's, the same one.
func (f *FastPath) SetDeny(server string, d *responder.Deny) {
	if s := f.lookup(server); s != nil {
		s.deny.Store(d)
		f.changed(s)
	}
}

// SetLimits replaces a server's budgets (on reload). The per-source state
// is kept; [limits] tracked_ips takes effect on a restart.
func (f *FastPath) SetLimits(server string, l responder.Limits) {
	if s := f.lookup(server); s != nil {
		s.limits.Store(&l)
		f.changed(s)
	}
}

// SetHostLimits replaces the program's share of the host-wide per-IP
// budget (Config.Host; on reload of [host]): every server's config takes
// it at the next sync, the sources' state is kept (an entry's theoretical
// arrival time holds under a new rate as well). The zero HostLimits turns
// it off. Its TrackedIPs cannot resize the table the program was loaded
// with.
func (f *FastPath) SetHostLimits(l responder.HostLimits) error {
	if l != (responder.HostLimits{}) {
		if err := l.Validate(); err != nil {
			return fmt.Errorf("the XDP program's host-wide budget: %w", err)
		}
	}
	f.host.Store(&l)
	f.mu.Lock()
	for _, s := range f.servers {
		s.dirty.Store(true)
	}
	f.mu.Unlock()
	f.kickServe()
	return nil
}

// Changed tells Serve that a server's replies may have changed (a new
// snapshot); it never blocks.
func (f *FastPath) Changed(server string) {
	if s := f.lookup(server); s != nil {
		f.changed(s)
	}
}

func (f *FastPath) changed(s *server) {
	s.dirty.Store(true)
	f.kickServe()
}

func (f *FastPath) kickServe() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// CountsOf is one server's share of the program's counters, for its
// responder's metrics (responder.Server.AddCounts); it counts nothing
// while no server has that name.
func (f *FastPath) CountsOf(server string) responder.CountSource {
	return serverCounts{f: f, name: server}
}

// serverCounts is CountsOf's source.
type serverCounts struct {
	f    *FastPath
	name string
}

// Counts implements responder.CountSource.
func (c serverCounts) Counts() []responder.Counts {
	s := c.f.lookup(c.name)
	if s == nil {
		return nil
	}
	st, ok := c.f.stats(s.index)
	if !ok {
		return nil
	}
	return c.f.countsOf(st)
}

// publish asks a server's protocols for their replies and, when they
// changed, swaps a new replies array into its entry of the program's map
// whole.
func (f *FastPath) publish(s *server, now time.Time) error {
	slots := make([]querydReply, f.list.slots)
	for _, p := range s.protocols() {
		fp, ok := p.(module.FastPath)
		row, known := f.list.row(p.Name())
		if !ok || !known {
			continue
		}
		fp.FastReplies(now, func(r module.FastReply) {
			if i, err := f.list.slot(row, r); err == nil {
				fill(&slots[i], r)
			}
		})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.byIndex[s.index] != s || slices.Equal(slots, s.last) {
		return nil
	}
	m, err := ebpf.NewMap(f.inner)
	if err != nil {
		return fmt.Errorf("replies array: %w", err)
	}
	defer m.Close() // the outer map keeps its own reference
	for i := range slots {
		if slots[i].Len == 0 {
			continue
		}
		if err := m.Put(uint32(i), &slots[i]); err != nil {
			return fmt.Errorf("reply %d: %w", i, err)
		}
	}
	if err := f.maps.Replies.Put(s.index, m); err != nil {
		return fmt.Errorf("swap the replies: %w", err)
	}
	s.last = slots
	s.updates++
	f.updates++
	return nil
}

// fill puts r into its slot, unless it does not fit one reply.
func fill(sl *querydReply, r module.FastReply) {
	if len(r.Reply) == 0 || len(r.Reply) > maxReply {
		return
	}
	sl.Len = uint32(len(r.Reply))
	sl.Csum = sum16(r.Reply)
	if r.Open {
		sl.Flags = replyOpen
	}
	copy(sl.Data[:], r.Reply)
}

// syncConfig writes a server's config entry when it changed: the clocks'
// offset, its silence, its budgets, the host's MTU and route mirror.
func (f *FastPath) syncConfig(s *server) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.byIndex[s.index] != s {
		return nil
	}
	c := s.lastCfg
	key := f.cfg.Issuer.Key()
	c.K0 = binary.LittleEndian.Uint64(key[:8])
	c.K1 = binary.LittleEndian.Uint64(key[8:])
	mono, wall := clocks()
	off := uint64(wall - mono + f.clockShift.Load())
	if d := int64(off - c.WallOffset); d > int64(time.Millisecond) || d < -int64(time.Millisecond) {
		c.WallOffset = off // the offset moves with steps of the wall clock only
	}
	c.Epoch = (uint64(mono) + c.WallOffset) / epochNS // the program's (now + wall_offset) / EPOCH_NS
	c.EpochNext = (c.Epoch+1)*epochNS - c.WallOffset
	c.FreshUntil = freshUntil(s.cfg.SilentFrom, wall, mono)
	f.setBudgets(s, &c)
	c.Mtu = f.mtu
	c.RouteGen = max(f.routeGen, 1)
	c.Deny = uint32(len(s.lastDeny))
	c.Routes = 0
	if f.lastNet.routes != nil && !f.lastNet.full {
		c.Routes = 1
	}
	c.Enabled = 1
	if f.disabled.Load() || s.denyFull {
		c.Enabled = 0 // a deny list only in part in the trie: the socket path applies it all
	}
	if c == s.lastCfg && c.K0 != 0 {
		return nil
	}
	if err := f.maps.ConfigMap.Put(s.index, &c); err != nil {
		return err
	}
	s.lastCfg = c
	return nil
}

// freshUntil is the monotonic time from which the program is silent for a
// server (its SilentFrom on the monotonic clock); ^0 while nothing can
// silence it.
func freshUntil(silentFrom func() time.Time, wall, mono int64) uint64 {
	if silentFrom == nil {
		return math.MaxUint64
	}
	from := silentFrom()
	if from.IsZero() {
		return math.MaxUint64
	}
	at := from.UnixNano() - (wall - mono)
	if at < 0 {
		return 0
	}
	return uint64(at)
}

// setBudgets writes a server's byte budgets and Quake 3's and Bedrock's
// packet rates into c, with the responder's semantics and arithmetic
// (responder.GCRA, responder.SplitBudget): the unproven budget split among
// the receive loops (here the CPUs), and so the proven-source tier's gate
// (responder.SplitPackets) and how long a source stays proven.
func (f *FastPath) setBudgets(s *server, c *querydConfig) {
	l := *s.limits.Load()
	if l == (responder.Limits{}) {
		l = responder.DefaultLimits
	}
	perIP := responder.NewGCRA(float64(max(l.PerIPRate, 1)), max(l.PerIPBurst, 1))
	c.PeripNs, c.PeripBurst, c.PeripTau = perIP.CostQ16(), uint64(l.PerIPBurst), uint64(perIP.Tolerance())
	rate, burst := responder.SplitBudget(l.UnprovenRate, l.UnprovenBurst, f.ncpu)
	unp := responder.NewGCRA(float64(rate), burst)
	c.UnpNs, c.UnpBurst, c.UnpTau = unp.CostQ16(), uint64(burst), uint64(unp.Tolerance())
	c.RateCost, c.RateTau = f.packetRates(s)
	c.GateCost, c.GateTau = 0, 0
	if rate, burst := responder.SplitPackets(l.UnprovenPacketRate, l.UnprovenPacketBurst, f.ncpu); rate > 0 {
		g := responder.NewGCRA(float64(rate), burst)
		c.GateCost, c.GateTau = uint64(g.Cost(1)), uint64(g.Tolerance())
	}
	c.ProvenNs = uint64(max(l.ProvenFor, 0))
	c.ProvenSeed, c.ProvenMask = s.provenSeed, f.provenMask
	c.HostNs, c.HostBurst, c.HostTau = 0, 0, 0
	if h := f.host.Load(); h != nil && *h != (responder.HostLimits{}) {
		g := h.GCRA()
		c.HostNs, c.HostBurst, c.HostTau = g.CostQ16(), uint64(h.PerIPBurst), uint64(g.Tolerance())
	}
}

// epochNS is the token epoch (challenge.Epoch, the program's EPOCH_NS).
const epochNS = uint64(challenge.Epoch)

// packetRates are the per-source packet rates of the server's protocols
// (dgram.PacketLimited) by the program's row, as the GCRA's cost per
// request and tolerance in ns (0, 0: none).
func (f *FastPath) packetRates(s *server) (cost, tolerance [maxProtos]uint64) {
	for _, p := range s.protocols() {
		pl, ok := p.(dgram.PacketLimited)
		row, known := f.list.row(p.Name())
		if !ok || !known {
			continue
		}
		if r, burst := pl.PacketLimit(); r > 0 {
			g := responder.NewGCRA(r, max(burst, 1))
			cost[row], tolerance[row] = uint64(g.Cost(1)), uint64(g.Tolerance())
		}
	}
	return cost, tolerance
}

// syncDeny writes a server's [limits] deny into the program's trie when it
// changed, then its config's count of its entries (0: the program skips
// the lookup).
func (f *FastPath) syncDeny(s *server) error {
	want := map[querydSrvdenykey]bool{}
	for _, p := range s.deny.Load().Prefixes() {
		want[denyKey(s.index, p)] = true
	}
	f.mu.Lock()
	if f.closed || f.byIndex[s.index] != s {
		f.mu.Unlock()
		return nil
	}
	var errs []error
	for k := range want {
		if !s.lastDeny[k] {
			one := uint8(1)
			if err := f.maps.Deny.Put(k, &one); err != nil {
				delete(want, k)
				errs = append(errs, fmt.Errorf("server %s: deny list (the program holds %d prefixes for all servers): %w", s.cfg.Name, f.maps.Deny.MaxEntries(), err))
			}
		}
	}
	for k := range s.lastDeny {
		if !want[k] {
			errs = append(errs, f.maps.Deny.Delete(k))
		}
	}
	if full := len(errs) > 0; full != s.denyFull {
		s.denyFull = full
		if full {
			f.log.Warn("XDP: the deny list does not fit the program; this server's queries go to the socket path", "server", s.cfg.Name)
		}
	}
	s.lastDeny = want
	f.mu.Unlock()
	return errors.Join(append(errs, f.syncConfig(s))...)
}

// denyKey is the trie key of server i's prefix p: the index big-endian,
// then IPv4 as ::ffff:a.b.c.d/96+n.
func denyKey(i uint32, p netip.Prefix) querydSrvdenykey {
	n := p.Bits()
	if p.Addr().Is4() {
		n += 96
	}
	return querydSrvdenykey{Prefixlen: uint32(32 + n), Server: bits.ReverseBytes32(i), Addr: p.Addr().As16()}
}

// destsOf expands the servers' listen addresses over the attached
// interfaces' local addresses: a wildcard listen takes every address of
// its family (an IPv6 socket is IPv6 only: the batch layer sets
// IPV6_V6ONLY), an exact one its own where the interface has it. An exact
// listen wins over another server's wildcard on the same port. It also
// returns the ports: 1 + the index of a server listening on each.
func destsOf(servers []*server, st netState) (map[querydDestkey]querydDest, map[uint16]uint32) {
	dests := map[querydDestkey]querydDest{}
	ports := map[uint16]uint32{}
	for _, exact := range []bool{false, true} {
		for _, s := range servers {
			for _, ap := range s.cfg.Listen {
				if _, ok := ports[ap.Port()]; !ok {
					ports[ap.Port()] = s.index + 1
				}
				la := ap.Addr()
				v6 := la.Is6() && !la.Is4In6()
				if la.Unmap().IsUnspecified() == exact {
					continue
				}
				for k, kind := range st.addrs {
					a := netip.AddrFrom16(k.Addr)
					info, ok := st.ifaces[k.Ifindex]
					if kind != querydAddrKindADDR_LOCAL || !ok || a.Is4In6() == v6 {
						continue
					}
					if exact && la.Unmap() != a.Unmap() {
						continue
					}
					d := querydDest{Mac: info.mac, Server: querydServerLimit(s.index)}
					if info.vlanUppers {
						d.Iflags = querydIfaceFlagsIFACE_VLAN_UPPERS
					}
					dests[querydDestkey{Ifindex: k.Ifindex, Port: bits.ReverseBytes16(ap.Port()), Addr: k.Addr}] = d
				}
			}
		}
	}
	return dests, ports
}

// syncDestsLocked writes the destinations and ports of the current
// servers and interfaces into the program's maps, where they changed.
// Past MAX_DESTS, the rest pass to the socket path (logged).
func (f *FastPath) syncDestsLocked() error {
	var ss []*server
	for _, s := range f.byIndex {
		if s != nil {
			ss = append(ss, s)
		}
	}
	dests, ports := destsOf(ss, f.lastNet)
	var errs []error
	for k, v := range f.lastDests {
		if now, ok := dests[k]; !ok || now != v {
			if err := f.maps.Dests.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
				errs = append(errs, err)
			}
		}
	}
	keys := make([]querydDestkey, 0, len(dests))
	for k := range dests {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b querydDestkey) int { return int(dests[a].Server) - int(dests[b].Server) })
	for _, k := range keys {
		v := dests[k]
		if old, ok := f.lastDests[k]; ok && old == v {
			continue
		}
		if err := f.maps.Dests.Put(k, &v); err != nil {
			delete(dests, k)
			errs = append(errs, fmt.Errorf("destination table (the program holds %d): %w", f.maps.Dests.MaxEntries(), err))
		}
	}
	for p := range f.lastPorts {
		if _, ok := ports[p]; !ok {
			errs = append(errs, f.maps.Ports.Put(uint32(p), uint32(0)))
		}
	}
	for p, v := range ports {
		if f.lastPorts[p] != v {
			errs = append(errs, f.maps.Ports.Put(uint32(p), v))
		}
	}
	f.lastDests, f.lastPorts = dests, ports
	return errors.Join(errs...)
}
