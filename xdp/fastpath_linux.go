//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/responder"
)

// syncEvery is how often Serve checks the feed's freshness and the clocks.
const syncEvery = 50 * time.Millisecond

// FastPath is the loaded and attached XDP program with the maps it reads.
// New acquires it (load, attach); Serve keeps the maps in sync until its
// context ends, then detaches.
type FastPath struct {
	cfg        Config
	log        *slog.Logger
	spec       *ebpf.CollectionSpec
	maps       querydMaps
	mapsByName map[string]*ebpf.Map // the same maps, for loading a program per interface
	inner      *ebpf.MapSpec        // a replies array, made anew for each publication
	links      []attached
	net        *netWatch
	ncpu       int
	mtu        uint32 // the smallest MTU of the interfaces
	protos     atomic.Pointer[[]module.Protocol]
	limits     atomic.Pointer[responder.Limits]
	deny       atomic.Pointer[responder.Deny]
	kick       chan struct{}
	disabled   atomic.Bool  // tests: pass everything to the socket path
	clockShift atomic.Int64 // tests: ns added to the program's wall clock (token epochs)

	mu       sync.Mutex // guards what Serve and a scrape share
	last     [numSlots]querydReply
	drained  sourceBuf // DrainSources' batch buffer
	lastCfg  querydConfig
	lastNet  netState
	lastDeny map[querydDenykey]bool
	updates  uint64 // reply publications
	closed   bool
	closeErr error
}

// attached is one interface the program is attached to.
type attached struct {
	name  string
	index uint32
	mode  Mode
	bound bool // the device-bound program (it reads the VLAN tag the driver took off)
	prog  *ebpf.Program
	link  link.Link
}

// New loads the program and attaches it to every configured interface
// through a BPF link (a crashed daemon leaves nothing attached). It fails
// with the reason when the kernel refuses (no CAP_BPF / CAP_NET_ADMIN, no
// XDP, an unknown interface); the daemon then serves on the socket path.
func New(cfg Config) (f *FastPath, err error) {
	if len(cfg.Interfaces) == 0 {
		return nil, errors.New("no interface to attach to")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Issuer == nil {
		return nil, errors.New("no challenge issuer")
	}
	spec, err := loadQueryd()
	if err != nil {
		return nil, err
	}
	tracked := uint32(max(cfg.Limits.TrackedIPs, 16))
	spec.Maps[querydMapPerip].MaxEntries = tracked
	spec.Maps[querydMapQ3rate].MaxEntries = tracked
	spec.Maps[querydMapBedrate].MaxEntries = tracked
	f = &FastPath{cfg: cfg, log: cfg.Logger, spec: spec, inner: spec.Maps[querydMapReplies].InnerMap.Copy(), kick: make(chan struct{}, 1)}
	if f.ncpu, err = ebpf.PossibleCPU(); err != nil {
		return nil, fmt.Errorf("possible CPUs: %w", err)
	}
	if err := f.loadMaps(); err != nil {
		return nil, fmt.Errorf("load the XDP maps (needs CAP_BPF and CAP_NET_ADMIN, Linux 5.18 or later): %w", err)
	}
	loaded := f // the returns below set f to nil
	defer func() {
		if err != nil {
			loaded.close()
		}
	}()
	if f.net, err = openNetWatch(); err != nil {
		return nil, err
	}
	l := cfg.Limits
	f.limits.Store(&l)
	f.deny.Store(cfg.Deny)
	mtu, err := f.attachAll()
	if err != nil {
		return nil, err
	}
	f.mtu = uint32(mtu)
	// The interfaces' addresses and the deny list before the first query
	// (each writes the config map).
	if err := errors.Join(f.syncNet(), f.syncDeny()); err != nil {
		return nil, err
	}
	if cfg.Registry != nil {
		if err := cfg.Registry.Register(collector{f}); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	return f, nil
}

// attachAll attaches the program to every interface and returns the
// smallest MTU among them.
func (f *FastPath) attachAll() (int, error) {
	mtu := math.MaxInt
	for _, name := range f.cfg.Interfaces {
		ifc, err := net.InterfaceByName(name)
		if err != nil {
			return 0, fmt.Errorf("interface %q: %w", name, err)
		}
		a, err := f.attach(ifc)
		if err != nil {
			return 0, err
		}
		f.links = append(f.links, a)
		mtu = min(mtu, ifc.MTU)
	}
	return mtu, nil
}

// loadMaps creates the program's maps once; every interface's program
// uses them.
func (f *FastPath) loadMaps() error {
	ms := f.spec.Copy()
	ms.Programs = nil
	coll, err := ebpf.NewCollection(ms)
	if err != nil {
		return err
	}
	f.mapsByName = maps.Clone(coll.Maps)
	return coll.Assign(&f.maps)
}

// loadProgram loads the program named name, bound to device ifindex when
// bound (the only way to read the VLAN tag the driver took off).
func (f *FastPath) loadProgram(name string, ifindex int, bound bool) (*ebpf.Program, error) {
	ps := f.spec.Copy()
	for n := range ps.Programs {
		if n != name {
			delete(ps.Programs, n)
		}
	}
	if bound {
		ps.Programs[name].Ifindex = uint32(ifindex)
		ps.Programs[name].Flags |= unix.BPF_F_XDP_DEV_BOUND_ONLY
	}
	var obj struct {
		P *ebpf.Program `ebpf:"prog"`
	}
	ps.Programs["prog"] = ps.Programs[name]
	delete(ps.Programs, name)
	if err := ps.LoadAndAssign(&obj, &ebpf.CollectionOptions{MapReplacements: f.mapsByName}); err != nil {
		return nil, fmt.Errorf("load the XDP program (needs CAP_BPF and CAP_NET_ADMIN, Linux 5.18 or later): %w", err)
	}
	return obj.P, nil
}

// attach links the program to ifc in the configured mode. Native mode
// takes the device-bound program (it reads the VLAN tag the driver took
// off, Linux 6.8), else the unbound one (an interface with VLAN devices on
// it then passes every frame), else falls back to generic with a warning.
func (f *FastPath) attach(ifc *net.Interface) (attached, error) {
	a := attached{name: ifc.Name, index: uint32(ifc.Index), mode: f.cfg.Mode}
	var err error
	if a.mode == ModeNative {
		for _, bound := range []bool{true, false} {
			if bound && f.cfg.unbound {
				continue
			}
			name := "queryd_xdp"
			if bound {
				name = "queryd_xdp_dev"
			}
			if a.prog, err = f.loadProgram(name, ifc.Index, bound); err == nil {
				if a.link, err = link.AttachXDP(link.XDPOptions{Program: a.prog, Interface: ifc.Index, Flags: link.XDPDriverMode}); err == nil {
					a.bound = bound
					break
				}
				a.prog.Close()
			}
			if held(err) {
				return attached{}, fmt.Errorf("attach XDP to %q: another XDP program (another queryd?) holds %s: %w", ifc.Name, ifc.Name, err)
			}
			if bound {
				f.log.Info("XDP: the device-bound program was refused; VLAN tags taken off by the driver cannot be read (interfaces with VLAN devices pass every frame)", "interface", ifc.Name, "err", err)
			}
		}
		if err != nil {
			f.log.Warn("XDP: native mode refused; falling back to generic (slower)", "interface", ifc.Name, "err", err)
			a.mode = ModeGeneric
		}
	}
	if a.mode == ModeGeneric {
		if a.prog, err = f.loadProgram("queryd_xdp", ifc.Index, false); err != nil {
			return attached{}, err
		}
		if a.link, err = link.AttachXDP(link.XDPOptions{Program: a.prog, Interface: ifc.Index, Flags: link.XDPGenericMode}); err != nil {
			a.prog.Close()
			if held(err) {
				return attached{}, fmt.Errorf("attach XDP to %q: another XDP program (another queryd?) holds %s: %w", ifc.Name, ifc.Name, err)
			}
			return attached{}, fmt.Errorf("attach XDP to %q (needs CAP_NET_ADMIN): %w", ifc.Name, err)
		}
	}
	f.log.Info("XDP fast path attached", "interface", ifc.Name, "mode", a.mode, "vlan_tag_read", a.bound)
	return a, nil
}

// held reports whether an attach failed because another XDP program is
// attached to the interface (in the same or the other mode).
func held(err error) bool {
	return errors.Is(err, unix.EBUSY) || errors.Is(err, unix.EEXIST)
}

// Name is the part's label in logs.
func (f *FastPath) Name() string { return "xdp" }

// SetProtocols makes ps the protocols whose replies the program sends (at
// start and on reload); it does not re-attach.
func (f *FastPath) SetProtocols(ps []module.Protocol) {
	ps = append([]module.Protocol(nil), ps...)
	f.protos.Store(&ps)
	f.Changed()
}

// SetDeny replaces the [limits] deny list (on reload): the socket path's,
// the same one.
func (f *FastPath) SetDeny(d *responder.Deny) {
	f.deny.Store(d)
	f.Changed()
}

// SetLimits replaces the budgets (on reload). The per-source state is kept;
// [limits] tracked_ips takes effect on a restart.
func (f *FastPath) SetLimits(l responder.Limits) {
	f.limits.Store(&l)
	f.Changed()
}

// Changed tells Serve that the replies may have changed (a new snapshot);
// it never blocks.
func (f *FastPath) Changed() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// Serve keeps the maps in sync (replies on every change and every second,
// the feed's freshness and the clocks every syncEvery) until ctx is done,
// then detaches and frees the program.
func (f *FastPath) Serve(ctx context.Context) error {
	defer f.close()
	tick := time.NewTicker(syncEvery)
	defer tick.Stop()
	f.publishLogged()
	sec := time.Now().Unix()
	var netAt time.Time // the last netlink dump
	netDue := false     // a change came in less than netEvery after it
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-f.kick:
			f.denyLogged()
			f.syncLogged()
			f.publishLogged()
		case <-f.net.changed:
			if netDue = time.Since(netAt) < netEvery; !netDue {
				f.netLogged()
				netAt = time.Now()
			}
		case now := <-tick.C:
			f.syncLogged()
			if s := now.Unix(); s != sec || netDue && now.Sub(netAt) >= netEvery {
				if s != sec {
					sec = s
					f.publishLogged()
				}
				netDue = false
				f.netLogged() // also once a second, in case a notice was lost
				netAt = now
			}
		}
	}
}

// netEvery is the least time between two netlink dumps: a burst of link,
// address or route changes (a routing daemon's churn) costs one dump in
// each.
const netEvery = 200 * time.Millisecond

func (f *FastPath) netLogged() {
	if err := f.syncNet(); err != nil {
		f.log.Warn("XDP: reading the interfaces' addresses", "err", err)
	}
}

func (f *FastPath) denyLogged() {
	if err := f.syncDeny(); err != nil {
		f.log.Warn("XDP: writing the deny list", "err", err)
	}
}

func (f *FastPath) publishLogged() {
	if err := f.publish(time.Now()); err != nil {
		f.log.Warn("XDP: publishing the replies", "err", err)
	}
}

func (f *FastPath) syncLogged() {
	if err := f.syncConfig(); err != nil {
		f.log.Warn("XDP: writing the config map", "err", err)
	}
}

// publish asks the protocols for their replies and, when they changed,
// swaps a new replies array into the program's map whole.
func (f *FastPath) publish(now time.Time) error {
	var slots [numSlots]querydReply
	if ps := f.protos.Load(); ps != nil {
		for _, p := range *ps {
			if fp, ok := p.(module.FastPath); ok {
				fp.FastReplies(now, func(r module.FastReply) { fill(&slots, r) })
			}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || slots == f.last {
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
	if err := f.maps.Replies.Put(uint32(0), m); err != nil {
		return fmt.Errorf("swap the replies: %w", err)
	}
	f.last = slots
	f.updates++
	return nil
}

// fill puts r into its slot, unless the program does not know it or it
// does not fit one reply.
func fill(slots *[numSlots]querydReply, r module.FastReply) {
	i, ok := slotOf[r.Query]
	if !ok || len(r.Reply) == 0 || len(r.Reply) > maxReply {
		return
	}
	s := &slots[i]
	s.Len = uint32(len(r.Reply))
	s.Csum = sum16(r.Reply)
	if r.Open {
		s.Flags = replyOpen
	}
	copy(s.Data[:], r.Reply)
}

// syncConfig writes the config map when it changed: the clocks' offset,
// the feed's freshness, the budgets, the listen addresses.
func (f *FastPath) syncConfig() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	c := f.lastCfg
	key := f.cfg.Issuer.Key()
	c.K0 = binary.LittleEndian.Uint64(key[:8])
	c.K1 = binary.LittleEndian.Uint64(key[8:])
	mono, wall := clocks()
	off := uint64(wall - mono + f.clockShift.Load())
	if d := int64(off - c.WallOffset); d > int64(time.Millisecond) || d < -int64(time.Millisecond) {
		c.WallOffset = off // the offset moves with steps of the wall clock only
	}
	c.FreshUntil = f.freshUntil(wall, mono)
	f.setBudgets(&c)
	c.Listen = listenEntries(f.cfg.Listen)
	c.Mtu = f.mtu
	c.Deny = uint32(len(f.lastDeny))
	c.Routes = 0
	if f.lastNet.routes != nil && !f.lastNet.full {
		c.Routes = 1
	}
	c.Enabled = 1
	if f.disabled.Load() {
		c.Enabled = 0
	}
	if c == f.lastCfg && c.K0 != 0 {
		return nil
	}
	if err := f.maps.ConfigMap.Put(uint32(0), &c); err != nil {
		return err
	}
	f.lastCfg = c
	return nil
}

// clocks reads CLOCK_MONOTONIC (bpf_ktime_get_ns) and the wall clock.
func clocks() (mono, wall int64) {
	var m unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &m)
	return m.Nano(), time.Now().UnixNano()
}

// freshUntil is the monotonic time from which the program is silent
// (Config.SilentFrom on the monotonic clock); ^0 while nothing can silence it.
func (f *FastPath) freshUntil(wall, mono int64) uint64 {
	if f.cfg.SilentFrom == nil {
		return math.MaxUint64
	}
	from := f.cfg.SilentFrom()
	if from.IsZero() {
		return math.MaxUint64
	}
	at := from.UnixNano() - (wall - mono)
	if at < 0 {
		return 0
	}
	return uint64(at)
}

// setBudgets writes the byte budgets and Quake 3's and Bedrock's packet
// rates into c,
// with the responder's semantics: the unproven budget split among the
// receive loops (here the CPUs), each share's burst at least 1,500 bytes.
func (f *FastPath) setBudgets(c *querydConfig) {
	l := *f.limits.Load()
	if l == (responder.Limits{}) {
		l = responder.DefaultLimits
	}
	c.PeripRate, c.PeripBurst = uint64(l.PerIPRate), uint64(l.PerIPBurst)
	c.PeripTau = tau(c.PeripBurst, float64(c.PeripRate))
	n := max(f.ncpu, 1)
	c.UnpRate = uint64(max(l.UnprovenRate/n, 1))
	c.UnpBurst = uint64(max(l.UnprovenBurst/n, 1500))
	c.UnpTau = tau(c.UnpBurst, float64(c.UnpRate))
	c.Q3Cost, c.Q3Tau = f.packetRate(protoQ3)
	c.BedrockCost, c.BedrockTau = f.packetRate(protoBedrock)
}

// packetRate is the per-source packet rate of the protocol of the
// program's row proto, as the GCRA's cost per request and tolerance in ns
// (0, 0: none): each protocol's own, whatever the order of the protocols.
func (f *FastPath) packetRate(proto int) (cost, tolerance uint64) {
	ps := f.protos.Load()
	if ps == nil {
		return 0, 0
	}
	for _, p := range *ps {
		pl, ok := p.(dgram.PacketLimited)
		if !ok || p.Name() != protocolLabel[proto] {
			continue
		}
		if r, burst := pl.PacketLimit(); r > 0 {
			return uint64(math.Ceil(1e9 / r)), tau(uint64(max(burst, 1)), r)
		}
	}
	return 0, 0
}

// tau is how long a bucket of burst tokens at rate tokens/s takes to fill,
// in ns, rounded up: the GCRA's tolerance.
func tau(burst uint64, rate float64) uint64 {
	return uint64(math.Ceil(float64(burst) * 1e9 / rate))
}

// listenEntries are the program's listen table: port, family, address (or
// any). An IPv6 socket is IPv6 only (the batch layer sets IPV6_V6ONLY).
func listenEntries(aps []netip.AddrPort) (out [len(querydConfig{}.Listen)]querydListen) {
	for i, ap := range aps {
		if i == len(out) {
			break
		}
		e := &out[i]
		e.Port = ap.Port()
		a := ap.Addr().Unmap()
		if ap.Addr().Is6() && !ap.Addr().Is4In6() {
			e.V6 = 1
		}
		if a.IsUnspecified() {
			e.Any = 1
			continue
		}
		if e.V6 == 1 {
			e.Addr = a.As16()
		} else {
			b := a.As4()
			copy(e.Addr[:], b[:])
		}
	}
	return out
}

// Counts returns the program's counters summed over the CPUs, by protocol,
// for the responder's metrics.
func (f *FastPath) Counts() []responder.Counts {
	st, ok := f.stats()
	if !ok {
		return nil
	}
	return countsOf(st)
}

// countsOf arranges the program's summed counters by protocol, with the
// responder's outcome labels.
func countsOf(st querydStats) []responder.Counts {
	out := make([]responder.Counts, 0, len(protocolLabel))
	for p, name := range protocolLabel {
		c := responder.Counts{Protocol: name, Requests: map[string]uint64{}, In: st.In[p], Out: st.Out[p]}
		for o, label := range outcomeLabel {
			c.Requests[label] += st.Req[p][o]
		}
		out = append(out, c)
	}
	return out
}

// stats sums the per-CPU counters.
func (f *FastPath) stats() (querydStats, bool) {
	var sum querydStats
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return sum, false
	}
	var per []querydStats
	if err := f.maps.StatsMap.Lookup(uint32(0), &per); err != nil {
		return sum, false
	}
	for _, s := range per {
		for p := range s.Req {
			for o := range s.Req[p] {
				sum.Req[p][o] += s.Req[p][o]
			}
			sum.In[p] += s.In[p]
			sum.Out[p] += s.Out[p]
		}
		for r := range s.Passed {
			sum.Passed[r] += s.Passed[r]
		}
		sum.ResizeFailed += s.ResizeFailed
	}
	return sum, true
}

// close detaches from every interface and frees the program and maps.
func (f *FastPath) close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return f.closeErr
	}
	f.closed = true
	var errs []error
	for _, a := range f.links {
		if err := a.link.Close(); err != nil {
			errs = append(errs, fmt.Errorf("detach %s: %w", a.name, err))
		} else {
			f.log.Info("XDP fast path detached", "interface", a.name)
		}
		a.prog.Close()
	}
	if f.net != nil {
		f.net.close()
	}
	if err := f.maps.Close(); err != nil {
		errs = append(errs, err)
	}
	f.closeErr = errors.Join(errs...)
	return f.closeErr
}

// syncNet writes the interfaces' MACs, VLAN flags and addresses into the
// program's maps when netlink says they changed.
func (f *FastPath) syncNet() error {
	want := map[uint32]bool{}
	for _, a := range f.links {
		want[a.index] = true
	}
	st, err := f.net.state(want)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	var errs []error
	for idx, info := range st.ifaces {
		v := querydIface{Mac: info.mac}
		if info.vlanUppers {
			v.Flags = querydIfaceFlagsIFACE_VLAN_UPPERS
		}
		if old, ok := f.lastNet.ifaces[idx]; ok && old == info {
			continue
		}
		errs = append(errs, f.maps.Ifaces.Put(idx, &v))
	}
	for idx := range f.lastNet.ifaces {
		if _, ok := st.ifaces[idx]; !ok {
			errs = append(errs, f.maps.Ifaces.Delete(idx))
		}
	}
	for k, kind := range f.lastNet.addrs {
		if now, ok := st.addrs[k]; !ok || now != kind {
			errs = append(errs, f.maps.LocalAddrs.Delete(k))
		}
	}
	for k, kind := range st.addrs {
		if old, ok := f.lastNet.addrs[k]; !ok || old != kind {
			if err := f.maps.LocalAddrs.Put(k, &kind); err != nil {
				delete(st.addrs, k) // full (more than MAX_ADDRS): queries to it pass
				errs = append(errs, fmt.Errorf("local address table: %w", err))
			}
		}
	}
	for k, oif := range f.lastNet.routes {
		if now, ok := st.routes[k]; !ok || now != oif {
			errs = append(errs, f.maps.Routes.Delete(k))
		}
	}
	for k, oif := range st.routes {
		if old, ok := f.lastNet.routes[k]; !ok || old != oif {
			if err := f.maps.Routes.Put(k, &oif); err != nil {
				st.full = true
				errs = append(errs, fmt.Errorf("routes table: %w", err))
			}
		}
	}
	if st.full != f.lastNet.full && st.full {
		f.log.Warn("XDP: more routes than the program mirrors; on interfaces that do not forward, queries pass to the socket path", "max", maxRoutes)
	}
	f.lastNet = st
	f.mu.Unlock()
	errs = append(errs, f.syncConfig())
	f.mu.Lock()
	return errors.Join(errs...)
}

// syncDeny writes [limits] deny into the program's trie when it changed,
// then the config map's count of its entries (0: the program skips the
// lookup).
func (f *FastPath) syncDeny() error {
	want := map[querydDenykey]bool{}
	for _, p := range f.deny.Load().Prefixes() {
		want[denyKey(p)] = true
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	var errs []error
	for k := range want {
		if !f.lastDeny[k] {
			one := uint8(1)
			errs = append(errs, f.maps.Deny.Put(k, &one))
		}
	}
	for k := range f.lastDeny {
		if !want[k] {
			errs = append(errs, f.maps.Deny.Delete(k))
		}
	}
	f.lastDeny = want
	f.mu.Unlock()
	return errors.Join(append(errs, f.syncConfig())...)
}

// denyKey is the trie key of p: IPv4 as ::ffff:a.b.c.d/96+n.
func denyKey(p netip.Prefix) querydDenykey {
	bits := p.Bits()
	if p.Addr().Is4() {
		bits += 96
	}
	return querydDenykey{Prefixlen: uint32(bits), Addr: p.Addr().As16()}
}
