//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/module"
)

// DivertAddr is one [listen] divert address: a stock game server's
// address and port whose queries the program takes, the port queryd binds
// on the same address (Hidden, one of Config.Listen), and the server's
// index (its counters' row; 0 in a single-server config).
type DivertAddr struct {
	Game   netip.AddrPort
	Hidden uint16
	Server uint8
}

// Divert is divert attached: the program's divert table and the tcx
// egress program on every interface, which gives the socket path's
// replies from a hidden port the game port back. Close detaches it.
type Divert struct {
	f     *FastPath
	addrs []DivertAddr
	objs  divertObjects
	links []link.Link
	mu    sync.Mutex
	mask  uint8 // the protocols that claim (1 << proto)
}

// Divert attaches divert for addrs beside the fast path (after New): the
// egress program on each of the fast path's interfaces, the tables of
// both programs. It fails when the kernel refuses (tcx needs Linux 6.6).
func (f *FastPath) Divert(addrs []DivertAddr) (d *Divert, err error) {
	if len(addrs) > int(f.maps.DivertMap.MaxEntries()) {
		return nil, fmt.Errorf("at most %d divert addresses, got %d", f.maps.DivertMap.MaxEntries(), len(addrs))
	}
	d = &Divert{f: f, addrs: append([]DivertAddr(nil), addrs...)}
	if err := loadDivertObjects(&d.objs, nil); err != nil {
		return nil, fmt.Errorf("load the divert egress program (needs CAP_BPF and CAP_NET_ADMIN): %w", err)
	}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	for _, a := range addrs {
		k := divertBackKey{Addr: a.Game.Addr().As16(), Port: a.Hidden}
		if err := d.objs.DivertBack.Put(&k, a.Game.Port()); err != nil {
			return nil, fmt.Errorf("divert egress table: %w", err)
		}
	}
	for _, a := range f.links {
		l, err := link.AttachTCX(link.TCXOptions{Interface: int(a.index), Program: d.objs.QuerydDivertTc, Attach: ebpf.AttachTCXEgress})
		if err != nil {
			return nil, fmt.Errorf("attach the divert egress program to %q (tcx, Linux 6.6 or later, CAP_NET_ADMIN): %w", a.name, err)
		}
		d.links = append(d.links, l)
	}
	d.SetProtocols(f.protocols())
	if f.cfg.Registry != nil {
		if err := f.cfg.Registry.Register(divertCollector{d}); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	for _, a := range addrs {
		f.log.Info("divert: queries to the game server's address taken in the kernel", "game", a.Game, "hidden_port", a.Hidden)
	}
	return d, nil
}

// protocols are the protocols SetProtocols last gave (nil before).
func (f *FastPath) protocols() []module.Protocol {
	if p := f.protos.Load(); p != nil {
		return *p
	}
	return nil
}

// protoIndex maps the protocols' names to the program's rows.
var protoIndex = func() map[string]int {
	m := map[string]int{}
	for i, n := range protocolLabel {
		m[n] = i
	}
	return m
}()

// SetProtocols makes ps the protocols whose queries are taken (at start
// and on reload): a datagram no protocol of ps claims goes to the game
// server.
func (d *Divert) SetProtocols(ps []module.Protocol) error {
	var mask uint8
	for _, p := range ps {
		if i, ok := protoIndex[p.Name()]; ok {
			mask |= 1 << i
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mask = mask
	for _, a := range d.addrs {
		k := divertKey(a.Game)
		v := querydDivertVal{Hidden: a.Hidden, Server: a.Server, Protos: mask}
		if err := d.f.maps.DivertMap.Put(&k, &v); err != nil {
			return fmt.Errorf("divert table: %w", err)
		}
	}
	return d.f.maps.DivertOn.Put(uint32(0), uint32(1))
}

func divertKey(ap netip.AddrPort) querydDivertKey {
	return querydDivertKey{Addr: ap.Addr().As16(), Port: ap.Port()}
}

// Close detaches the egress program and empties the program's divert
// table (queries to the game server then reach it).
func (d *Divert) Close() error {
	var errs []error
	_ = d.f.maps.DivertOn.Put(uint32(0), uint32(0)) // as Delete below
	for _, a := range d.addrs {
		k := divertKey(a.Game)
		_ = d.f.maps.DivertMap.Delete(&k) // fails only once the fast path is closed: detached anyway
	}
	for _, l := range d.links {
		errs = append(errs, l.Close())
	}
	d.links = nil
	errs = append(errs, d.objs.Close())
	return errors.Join(errs...)
}

// DivertCounts are one server's divert counters (queryd_xdp_diverted_total).
type DivertCounts struct {
	XDP, Socket, Dropped, Passed uint64
}

// Counts sums the program's divert counters of server i over the CPUs.
func (d *Divert) Counts(server uint8) (DivertCounts, error) {
	var per []querydDivertCount
	if err := d.f.maps.DivertStats.Lookup(uint32(server), &per); err != nil {
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
// gave the game port back.
func (d *Divert) Rewritten() (uint64, error) {
	var per []uint64
	if err := d.objs.DivertRewritten.Lookup(uint32(0), &per); err != nil {
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

// divertCollector exports the divert counters (server 0; host mode wraps
// a registry per server).
type divertCollector struct{ d *Divert }

// Describe implements prometheus.Collector.
func (c divertCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descDiverted
	ch <- descDivertRewritten
}

// Collect implements prometheus.Collector.
func (c divertCollector) Collect(ch chan<- prometheus.Metric) {
	if n, err := c.d.Counts(0); err == nil {
		for _, r := range []struct {
			label string
			n     uint64
		}{{"xdp", n.XDP}, {"socket", n.Socket}, {"dropped", n.Dropped}, {"passed", n.Passed}} {
			ch <- prometheus.MustNewConstMetric(descDiverted, prometheus.CounterValue, float64(r.n), r.label)
		}
	}
	if n, err := c.d.Rewritten(); err == nil {
		ch <- prometheus.MustNewConstMetric(descDivertRewritten, prometheus.CounterValue, float64(n))
	}
}
