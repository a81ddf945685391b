//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/queryd/queryd/responder"
)

// syncEvery is how often Serve checks the feed's freshness and the clocks.
const syncEvery = 50 * time.Millisecond

// FastPath is the loaded and attached XDP program with the maps it reads.
// New acquires it (load, attach); Serve keeps the maps in sync until its
// context ends, then detaches. One program answers for every server of
// the host (Config.Servers, SetServers), each from its own replies,
// budgets, deny list and silence.
type FastPath struct {
	cfg        Config
	log        *slog.Logger
	spec       *ebpf.CollectionSpec
	list       *programList // the program's protocols (bpf/protocols.h)
	maps       querydMaps
	mapsByName map[string]*ebpf.Map // the same maps, for loading a program per interface
	inner      *ebpf.MapSpec        // a replies array, made anew for each publication
	links      []attached
	net        *netWatch
	ncpu       int
	provenMask uint64 // the proven table's buckets - 1 (proven_linux.go)
	mtu        uint32 // the smallest MTU of the interfaces
	kick       chan struct{}
	disabled   atomic.Bool                          // tests: pass everything to the socket path
	host       atomic.Pointer[responder.HostLimits] // the program's share of the host-wide budget (Config.Host, SetHostLimits)
	clockShift atomic.Int64                         // tests: ns added to the program's wall clock (token epochs)

	mu        sync.Mutex         // guards what follows, shared by Serve, SetServers and a scrape
	servers   map[string]*server // by name
	byIndex   [maxServers]*server
	drained   sourceBuf // DrainSources' batch buffers
	lastNet   netState
	lastDests map[querydDestkey]querydDest
	lastPorts map[uint16]uint32
	routeGen  uint32 // the config's route_gen: a source's cached route back is good while it stays (never 0)
	updates   uint64 // reply publications, all servers
	closed    bool
	closeErr  error

	dv divertHost // [listen] divert (divert_linux.go)
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
	if err := checkServers(cfg.Servers); err != nil {
		return nil, err
	}
	if cfg.Host != (responder.HostLimits{}) {
		if err := cfg.Host.Validate(); err != nil {
			return nil, fmt.Errorf("the XDP program's host-wide budget: %w", err)
		}
	}
	spec, err := loadSpec(cfg.object)
	if err != nil {
		return nil, err
	}
	list, err := readList(spec)
	if err != nil {
		return nil, fmt.Errorf("the XDP program's protocols: %w", err)
	}
	tracked := trackedEntries(cfg.Servers)
	spec.Maps[querydMapPerip].MaxEntries = tracked
	spec.Maps[querydMapPktrate].MaxEntries = min(2*tracked, 1<<21) // room for two protocols' packet rates per source
	spec.Maps[querydMapHostip].MaxEntries = hostEntries(cfg.Host, tracked)
	spec.Maps[querydMapProven].MaxEntries = provenBuckets(int(tracked))
	spec.Maps[querydMapDrainMap].Contents = []ebpf.MapKV{{Key: uint32(0), Value: querydDrain{Gen: 1}}}
	spec.Maps[querydMapReplies].InnerMap.MaxEntries = list.slots
	spec.Maps[querydMapRepliesEmpty].MaxEntries = list.slots
	f = &FastPath{cfg: cfg, log: cfg.Logger, spec: spec, list: list, inner: spec.Maps[querydMapReplies].InnerMap.Copy(),
		kick: make(chan struct{}, 1), servers: map[string]*server{}, drained: sourceBuf{every: peerDrainEvery}}
	f.host.Store(&cfg.Host)
	if f.ncpu, err = ebpf.PossibleCPU(); err != nil {
		return nil, fmt.Errorf("possible CPUs: %w", err)
	}
	f.provenMask = uint64(spec.Maps[querydMapProven].MaxEntries - 1)
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
	mtu, err := f.attachAll()
	if err != nil {
		return nil, err
	}
	f.mtu = uint32(mtu)
	if cfg.Registry != nil {
		if err := cfg.Registry.Register(collector{f}); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	// The servers, the interfaces' addresses (the destinations) and the
	// deny lists before the first query.
	if err := f.SetServers(cfg.Servers); err != nil {
		return nil, err
	}
	if err := f.syncNet(); err != nil {
		return nil, err
	}
	return f, nil
}

// loadSpec is the program's spec: the embedded object's, or obj's
// (tests).
func loadSpec(obj []byte) (*ebpf.CollectionSpec, error) {
	if obj == nil {
		return loadQueryd()
	}
	spec, err := ebpf.LoadCollectionSpecFromReader(bytes.NewReader(obj))
	if err != nil {
		return nil, fmt.Errorf("load the XDP program's object: %w", err)
	}
	return spec, nil
}

// trackedEntries sizes the per-source budget maps, which the servers
// share: the sum of their [limits] tracked_ips (the default for a server
// that leaves it 0), at least 16, at most 1 << 20. Servers added later
// share what the first ones got (an LRU: the least recent are forgotten).
func trackedEntries(ss []Server) uint32 {
	n := 0
	for _, s := range ss {
		t := s.Limits.TrackedIPs
		if t <= 0 {
			t = responder.DefaultLimits.TrackedIPs
		}
		n += t
	}
	return uint32(min(max(n, 16), 1<<20))
}

// hostEntries sizes the host-wide budget's table: [host] tracked_ips, or
// tracked (the per-server tables' size) when it is 0; at least 16, at
// most 1 << 20.
func hostEntries(h responder.HostLimits, tracked uint32) uint32 {
	if h.TrackedIPs <= 0 {
		return tracked
	}
	return uint32(min(max(h.TrackedIPs, 16), 1<<20))
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

// Serve keeps the maps in sync (replies on every change and every second,
// the feeds' freshness and the clocks every syncEvery) until ctx is done,
// then detaches and frees the program.
func (f *FastPath) Serve(ctx context.Context) error {
	defer f.close()
	tick := time.NewTicker(syncEvery)
	defer tick.Stop()
	f.each(func(s *server) { f.refresh(s, true) })
	sec := time.Now().Unix()
	var netAt time.Time // the last netlink dump
	netDue := false     // a change came in less than netEvery after it
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-f.kick:
			f.each(func(s *server) {
				if s.dirty.Swap(false) {
					f.refresh(s, true)
				}
			})
		case <-f.net.changed:
			if netDue = time.Since(netAt) < netEvery; !netDue {
				f.netLogged()
				netAt = time.Now()
			}
		case now := <-tick.C:
			s := now.Unix()
			f.each(func(srv *server) { f.refresh(srv, s != sec) })
			if s != sec || netDue && now.Sub(netAt) >= netEvery {
				sec = s
				netDue = false
				f.netLogged() // also once a second, in case a notice was lost
				netAt = now
			}
		}
	}
}

// each calls fn for every server (a copy of the list: fn may take f.mu).
func (f *FastPath) each(fn func(*server)) {
	f.mu.Lock()
	ss := make([]*server, 0, len(f.servers))
	for _, s := range f.byIndex {
		if s != nil {
			ss = append(ss, s)
		}
	}
	f.mu.Unlock()
	for _, s := range ss {
		fn(s)
	}
}

// refresh writes a server's deny list and config, and its replies when
// publish is set (a change, or once a second).
func (f *FastPath) refresh(s *server, publish bool) {
	if publish {
		if err := f.syncDeny(s); err != nil {
			f.log.Warn("XDP: writing the deny list", "server", s.cfg.Name, "err", err)
		}
	}
	if err := f.syncConfig(s); err != nil {
		f.log.Warn("XDP: writing the config map", "server", s.cfg.Name, "err", err)
	}
	if publish {
		if err := f.publish(s, time.Now()); err != nil {
			f.log.Warn("XDP: publishing the replies", "server", s.cfg.Name, "err", err)
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

// clocks reads CLOCK_MONOTONIC (bpf_ktime_get_ns) and the wall clock.
func clocks() (mono, wall int64) {
	var m unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &m)
	return m.Nano(), time.Now().UnixNano()
}

// Counts returns the program's counters of every server summed over the
// CPUs, by protocol (CountsOf gives one server's).
func (f *FastPath) Counts() []responder.Counts {
	var sum querydStats
	f.mu.Lock()
	ss := f.byIndex
	f.mu.Unlock()
	for _, s := range ss {
		if s == nil {
			continue
		}
		if st, ok := f.stats(s.index); ok {
			addStats(&sum, &st)
		}
	}
	return f.countsOf(sum)
}

// countsOf arranges the program's summed counters by protocol (the
// list's rows, labelled with the protocols' names), with the responder's
// outcome labels.
func (f *FastPath) countsOf(st querydStats) []responder.Counts {
	out := make([]responder.Counts, 0, len(f.list.rows))
	for p, row := range f.list.rows {
		c := responder.Counts{Protocol: row.name, Requests: map[string]uint64{}, In: st.In[p], Out: st.Out[p]}
		for o, label := range outcomeLabel {
			c.Requests[label] += st.Req[p][o]
		}
		out = append(out, c)
	}
	return out
}

// stats sums server index i's per-CPU counters.
func (f *FastPath) stats(i uint32) (querydStats, bool) {
	var sum querydStats
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return sum, false
	}
	var per []querydStats
	if err := f.maps.StatsMap.Lookup(i, &per); err != nil {
		return sum, false
	}
	for k := range per {
		addStats(&sum, &per[k])
	}
	return sum, true
}

// addStats adds s to sum.
func addStats(sum, s *querydStats) {
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

// close detaches from every interface and frees the program and maps.
func (f *FastPath) close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return f.closeErr
	}
	f.closed = true
	var errs []error
	if err := f.divertClose(); err != nil {
		errs = append(errs, fmt.Errorf("divert: %w", err))
	}
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
	for _, s := range f.byIndex {
		if s != nil && s.cfg.Registry != nil {
			s.cfg.Registry.Unregister(s.coll)
		}
	}
	if f.cfg.Registry != nil {
		f.cfg.Registry.Unregister(collector{f})
	}
	if err := f.maps.Close(); err != nil {
		errs = append(errs, err)
	}
	f.closeErr = errors.Join(errs...)
	return f.closeErr
}

// syncNet reads the interfaces' MACs, VLAN flags, addresses and routes
// from netlink and writes them into the program's maps when they changed:
// the destinations (dests), the local addresses and the routes.
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
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	var errs []error
	for k, kind := range f.lastNet.addrs {
		if now, ok := st.addrs[k]; !ok || now != kind {
			errs = append(errs, f.maps.LocalAddrs.Delete(k))
		}
	}
	for k, kind := range st.addrs {
		if old, ok := f.lastNet.addrs[k]; !ok || old != kind {
			if err := f.maps.LocalAddrs.Put(k, &kind); err != nil {
				delete(st.addrs, k) // full (more than MAX_ADDRS): queries to it pass
				st.full = true      // and the mirrored route check passes everything (it cannot tell our own addresses)
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
	// Every dump ends the program's cached routes back (struct peer): a
	// change of the addresses, routes or forwarding is seen within a
	// second (at once for what netlink announces).
	if f.routeGen++; f.routeGen == 0 {
		f.routeGen = 1
	}
	errs = append(errs, f.syncDestsLocked())
	f.mu.Unlock()
	f.each(func(s *server) { errs = append(errs, f.syncConfig(s)) })
	return errors.Join(errs...)
}
