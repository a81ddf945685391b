//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/module"
)

// DivertAddr is one [listen] divert address: a stock game server's
// address and port whose queries the program takes, and the port queryd
// binds on the same address (Hidden, one of the server's Listen). The
// program's entry also carries the server's index in the per-destination
// tables (its counters' row), which Divert fills in.
type DivertAddr struct {
	Game   netip.AddrPort
	Hidden uint16
}

// divertHost is the host's share of divert, under its own lock: the
// egress program (loaded and attached with the first server's divert,
// kept until the fast path closes) and which Divert owns each entry of
// the program's divert table.
type divertHost struct {
	mu     sync.Mutex
	loaded bool
	objs   divertObjects
	links  []io.Closer // a tcx link or a tc filter per interface
	owner  map[querydDivertKey]*Divert
	joins  *joinReader // the program's join reports (divert_wake_linux.go)
	closed bool
}

// Divert is one server's divert: its entries in the program's divert
// table and in the egress program's. Close removes them.
type Divert struct {
	f      *FastPath
	server string
	index  uint8
	addrs  []DivertAddr
	takes  []string // the protocols whose queries it takes (nil: every protocol on)
	reg    prometheus.Registerer
	coll   divertCollector
	closed bool                                           // under f.dv.mu
	join   atomic.Pointer[func(game, src netip.AddrPort)] // OnJoin's function
}

// Divert attaches divert for server's addrs (the server is one of
// SetServers'; after New): the egress program on each of the fast path's
// interfaces (once for the host: through tcx, or a tc clsact filter
// before Linux 6.6), the tables of both programs. The program takes the queries of the protocols named in takes that are on
// (SetProtocols), each matched on its whole request shape (its claim in
// bpf/NAME.h); takes nil: of every protocol on. Everything else reaches the
// game server. It fails when the kernel refuses or an address is another server's divert address.
func (f *FastPath) Divert(server string, addrs []DivertAddr, takes []string) (d *Divert, err error) {
	s := f.lookup(server)
	if s == nil {
		return nil, fmt.Errorf("divert: no server %q in the fast path", server)
	}
	d = &Divert{f: f, server: server, index: uint8(s.index), addrs: append([]DivertAddr(nil), addrs...), reg: s.cfg.Registry}
	if takes != nil {
		d.takes = append([]string{}, takes...)
	}
	d.coll = divertCollector{d}
	h := &f.dv
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errors.New("divert: the fast path is closed")
	}
	n := len(h.owner)
	for _, a := range addrs {
		k := divertKey(a.Game)
		if o := h.owner[k]; o != nil {
			return nil, fmt.Errorf("divert %s: already diverted for server %s", a.Game, o.server)
		}
		n++
	}
	if n > int(f.maps.DivertMap.MaxEntries()) {
		return nil, fmt.Errorf("at most %d divert addresses on a host, got %d", f.maps.DivertMap.MaxEntries(), n)
	}
	if err := f.divertLoadLocked(); err != nil {
		return nil, err
	}
	zero := make([]querydDivertCount, f.ncpu) // the row may be a removed server's
	if err := f.maps.DivertStats.Put(uint32(d.index), zero); err != nil {
		return nil, fmt.Errorf("divert counters: %w", err)
	}
	if err := f.maps.DivertJoinStats.Put(uint32(d.index), make([]querydDivertJoinCount, f.ncpu)); err != nil {
		return nil, fmt.Errorf("divert join counters: %w", err)
	}
	defer func() {
		if err != nil {
			d.closeLocked()
		}
	}()
	mask := f.protoMask(d.taken(s.protocols()))
	for _, a := range addrs {
		k := divertKey(a.Game)
		h.owner[k] = d
		bk := divertBackKey{Addr: a.Game.Addr().As16(), Port: a.Hidden}
		if err := h.objs.DivertBack.Put(&bk, a.Game.Port()); err != nil {
			return nil, fmt.Errorf("divert egress table: %w", err)
		}
		v := querydDivertVal{Hidden: a.Hidden, Server: d.index, Protos: mask}
		if err := f.maps.DivertMap.Put(&k, &v); err != nil {
			return nil, fmt.Errorf("divert table: %w", err)
		}
	}
	if err := f.maps.DivertOn.Put(uint32(0), uint32(1)); err != nil {
		return nil, fmt.Errorf("divert table: %w", err)
	}
	if d.reg != nil {
		if err := d.reg.Register(d.coll); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	for _, a := range addrs {
		f.log.Info("divert: queries to the game server's address taken in the kernel", "server", server, "game", a.Game, "hidden_port", a.Hidden)
	}
	return d, nil
}

// divertLoadLocked loads the egress program and attaches it to every
// interface, once (f.dv.mu held).
func (f *FastPath) divertLoadLocked() (err error) {
	h := &f.dv
	if h.loaded {
		return nil
	}
	if err := loadDivertObjects(&h.objs, nil); err != nil {
		return fmt.Errorf("load the divert egress program (needs CAP_BPF and CAP_NET_ADMIN): %w", err)
	}
	defer func() {
		if err != nil {
			for _, l := range h.links {
				l.Close()
			}
			h.links = nil
			h.objs.Close()
		}
	}()
	for _, a := range f.links {
		l, err := f.attachEgress(a)
		if err != nil {
			return err
		}
		h.links = append(h.links, l)
	}
	if h.joins, err = f.startJoins(); err != nil {
		return err
	}
	if f.cfg.Registry != nil {
		if err := f.cfg.Registry.Register(rewrittenCollector{f}); err != nil {
			h.joins.r.Close() // not stop: its goroutine may wait for h.mu
			h.joins = nil
			return fmt.Errorf("metrics: %w", err)
		}
	}
	h.owner = map[querydDivertKey]*Divert{}
	h.loaded = true
	return nil
}

// envDivertClsact, set to 1 in queryd's environment, attaches divert's
// egress program as a tc clsact filter even where the kernel has tcx. For
// tests only: it lets a kernel of 6.6 or later run the attach of older
// ones.
const envDivertClsact = "QUERYD_TEST_DIVERT_CLSACT"

// attachTCX is link.AttachTCX (a test makes it answer as a kernel
// without tcx does).
var attachTCX = link.AttachTCX

// attachEgress attaches the divert egress program to a's egress: through
// tcx (Linux 6.6), else, when the kernel has no tcx, as a filter on a
// clsact qdisc (any kernel the XDP program loads on).
func (f *FastPath) attachEgress(a attached) (io.Closer, error) {
	prog := f.dv.objs.QuerydDivertTc
	if !f.cfg.clsact && os.Getenv(envDivertClsact) != "1" {
		l, err := attachTCX(link.TCXOptions{Interface: int(a.index), Program: prog, Attach: ebpf.AttachTCXEgress})
		if err == nil {
			f.log.Info("divert: the egress program attached through tcx", "interface", a.name)
			return l, nil
		}
		if !errors.Is(err, ebpf.ErrNotSupported) {
			return nil, fmt.Errorf("attach the divert egress program to %q (tcx, CAP_NET_ADMIN): %w", a.name, err)
		}
	}
	c, err := attachClsact(int(a.index), a.name, prog)
	if err != nil {
		return nil, fmt.Errorf("attach the divert egress program to %q (no tcx before Linux 6.6: a tc clsact filter, CAP_NET_ADMIN): %w", a.name, err)
	}
	f.log.Info("divert: the egress program attached as a tc filter (no tcx before Linux 6.6)", "interface", a.name,
		"filter", fmt.Sprintf("tc filter show dev %s egress: pref %d handle %#x %s", a.name, clsactPrio, clsactHandle, clsactName))
	return c, nil
}

// divertClose detaches the egress program and stops the join reports'
// reader (the fast path closing).
func (f *FastPath) divertClose() error {
	h := &f.dv
	h.mu.Lock()
	joins := h.joins
	h.joins = nil
	err := f.divertCloseLocked()
	h.mu.Unlock()
	return errors.Join(err, joins.stop()) // its goroutine takes h.mu
}

// divertCloseLocked is divertClose's share under f.dv.mu.
func (f *FastPath) divertCloseLocked() error {
	h := &f.dv
	h.closed = true
	if !h.loaded {
		return nil
	}
	for _, d := range h.owner {
		d.closed = true
		if d.reg != nil {
			d.reg.Unregister(d.coll)
		}
	}
	h.owner = nil
	var errs []error
	for _, l := range h.links {
		errs = append(errs, l.Close())
	}
	h.links = nil
	if f.cfg.Registry != nil {
		f.cfg.Registry.Unregister(rewrittenCollector{f})
	}
	errs = append(errs, h.objs.Close())
	h.loaded = false
	return errors.Join(errs...)
}

// protocols are the protocols SetProtocols last gave the server (nil
// before).
func (s *server) protocols() []module.Protocol {
	if p := s.protos.Load(); p != nil {
		return *p
	}
	return nil
}

// protoMask is the program's mask of the protocols ps (1 << row).
func (f *FastPath) protoMask(ps []module.Protocol) uint8 {
	var mask uint8
	for _, p := range ps {
		if i, ok := f.list.row(p.Name()); ok {
			mask |= 1 << i
		}
	}
	return mask
}

// taken are the protocols of on (the server's, SetProtocols') whose
// queries d takes.
func (d *Divert) taken(on []module.Protocol) []module.Protocol {
	if d.takes == nil {
		return on
	}
	var out []module.Protocol
	for _, p := range on {
		if slices.Contains(d.takes, p.Name()) {
			out = append(out, p)
		}
	}
	return out
}

// divertProtocols makes ps the server's protocols that are on
// (SetProtocols: at start and on reload): its divert addresses take the
// queries of those of them its Divert takes; a datagram none of them
// claims goes to the game server.
func (f *FastPath) divertProtocols(server string, ps []module.Protocol) error {
	h := &f.dv
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	for k, d := range h.owner {
		if d.server != server {
			continue
		}
		mask := f.protoMask(d.taken(ps))
		var v querydDivertVal
		if err := f.maps.DivertMap.Lookup(&k, &v); err != nil {
			errs = append(errs, fmt.Errorf("divert table: %w", err))
			continue
		}
		v.Protos = mask
		errs = append(errs, f.maps.DivertMap.Put(&k, &v))
	}
	return errors.Join(errs...)
}

// divertRemoved drops the divert entries of a server SetServers removes
// (its Divert, if not closed yet, then has none).
func (f *FastPath) divertRemoved(server string) {
	h := &f.dv
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, d := range h.owner {
		if d.server == server {
			d.closeLocked()
		}
	}
}

func divertKey(ap netip.AddrPort) querydDivertKey {
	return querydDivertKey{Addr: ap.Addr().As16(), Port: ap.Port()}
}

// Close removes the server's divert entries (queries to its game server
// then reach it) and its series. The egress program stays for the host.
func (d *Divert) Close() error {
	h := &d.f.dv
	h.mu.Lock()
	defer h.mu.Unlock()
	return d.closeLocked()
}

// closeLocked is Close with f.dv.mu held.
func (d *Divert) closeLocked() error {
	if d.closed {
		return nil
	}
	d.closed = true
	h := &d.f.dv
	for _, a := range d.addrs {
		k := divertKey(a.Game)
		if h.owner[k] != d {
			continue
		}
		delete(h.owner, k)
		_ = d.f.maps.DivertMap.Delete(&k) // fails only once the fast path is closed: detached anyway
		_ = d.f.maps.DivertRests.Delete(&k)
		bk := divertBackKey{Addr: a.Game.Addr().As16(), Port: a.Hidden}
		_ = h.objs.DivertBack.Delete(&bk)
	}
	if len(h.owner) == 0 {
		_ = d.f.maps.DivertOn.Put(uint32(0), uint32(0))
	}
	if d.reg != nil {
		d.reg.Unregister(d.coll)
	}
	return nil
}

// DivertCounts are one server's divert counters (queryd_xdp_diverted_total).
type DivertCounts struct {
	XDP, Socket, Dropped, Passed uint64
}

// Counts sums the program's divert counters of the server over the CPUs.
func (d *Divert) Counts() (DivertCounts, error) {
	var per []querydDivertCount
	if err := d.f.maps.DivertStats.Lookup(uint32(d.index), &per); err != nil {
		return DivertCounts{}, err
	}
	var c DivertCounts
	for _, p := range per {
		c.XDP += p.N[querydDivertResultDIVERT_XDP]
		c.Socket += p.N[querydDivertResultDIVERT_SOCKET]
		c.Dropped += p.N[querydDivertResultDIVERT_DROPPED]
		c.Passed += p.N[querydDivertResultDIVERT_PASSED]
	}
	return c, nil
}

// Rewritten is how many replies of the socket path the egress program
// gave the game port back, for every server of the host.
func (d *Divert) Rewritten() (uint64, error) { return d.f.divertRewritten() }

func (f *FastPath) divertRewritten() (uint64, error) {
	f.dv.mu.Lock()
	defer f.dv.mu.Unlock()
	if !f.dv.loaded {
		return 0, errors.New("divert: not loaded")
	}
	var per []uint64
	if err := f.dv.objs.DivertRewritten.Lookup(uint32(0), &per); err != nil {
		return 0, err
	}
	var n uint64
	for _, v := range per {
		n += v
	}
	return n, nil
}

var (
	descDiverted = prometheus.NewDesc("queryd_xdp_diverted_total",
		"Datagrams to a [listen] divert address (a stock game server's), by result: xdp (a query the XDP program answered), socket (a query handed to queryd's socket path), dropped (a query dropped: stale, over a budget, denied), passed (not a query, or not for this host: to the game server untouched).", []string{"result"}, nil)
	descDivertRewritten = prometheus.NewDesc("queryd_xdp_divert_rewritten_total",
		"Replies of queryd's socket path to diverted queries whose source port the egress program set back to the game server's.", nil, nil)
)

// divertCollector exports one server's divert counters (the daemon wraps
// its registry with server="NAME").
type divertCollector struct{ d *Divert }

// Describe implements prometheus.Collector.
func (c divertCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descDiverted
	ch <- descDivertJoins
}

// Collect implements prometheus.Collector.
func (c divertCollector) Collect(ch chan<- prometheus.Metric) {
	if n, err := c.d.Counts(); err == nil {
		for _, r := range []struct {
			label string
			n     uint64
		}{{"xdp", n.XDP}, {"socket", n.Socket}, {"dropped", n.Dropped}, {"passed", n.Passed}} {
			ch <- prometheus.MustNewConstMetric(descDiverted, prometheus.CounterValue, float64(r.n), r.label)
		}
	}
	c.d.collectJoins(ch)
}

// rewrittenCollector exports the egress program's counter (host-wide:
// one program for every server).
type rewrittenCollector struct{ f *FastPath }

// Describe implements prometheus.Collector.
func (c rewrittenCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descDivertRewritten }

// Collect implements prometheus.Collector.
func (c rewrittenCollector) Collect(ch chan<- prometheus.Metric) {
	if n, err := c.f.divertRewritten(); err == nil {
		ch <- prometheus.MustNewConstMetric(descDivertRewritten, prometheus.CounterValue, float64(n))
	}
}
