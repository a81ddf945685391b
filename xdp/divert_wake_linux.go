//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/prometheus/client_golang/prometheus"
)

// Divert's joins (bpf/divert_wake.h): while a server rests (Rest(true)),
// the program reports each game datagram (one no protocol claims) to one
// of its divert addresses on a ring buffer, at most once per address every
// 10 ms, and passes it as before. The host's reader (one goroutine, from
// the first Divert until the fast path closes) hands each report to the
// Divert that owns the address, which calls its OnJoin function.

// joinSize is struct divert_join's size: the divert key (16 + 2 + 2
// bytes), the source address (16) and port (2), padding (2).
const joinSize = 40

// Rest marks the server's divert addresses resting (asleep true: game
// datagrams to them are reported to OnJoin's function) or awake (not
// reported). A Divert starts awake; a closed one has no addresses left
// (nil). It fails when the kernel refuses.
func (d *Divert) Rest(asleep bool) error {
	h := &d.f.dv
	h.mu.Lock()
	defer h.mu.Unlock()
	if d.closed {
		return nil
	}
	var errs []error
	for _, a := range d.addrs {
		k := divertKey(a.Game)
		if asleep {
			errs = append(errs, d.f.maps.DivertRests.Put(&k, &querydDivertRest{}))
		} else if err := d.f.maps.DivertRests.Delete(&k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("divert rests table: %w", err)
	}
	return nil
}

// OnJoin makes fn the function called with a report (a game datagram
// from src to the divert address game while the server rests). It is
// called on the reader's goroutine, one report at a time: it must not
// block. nil: reports are ignored.
func (d *Divert) OnJoin(fn func(game, src netip.AddrPort)) {
	if fn == nil {
		d.join.Store(nil)
		return
	}
	d.join.Store(&fn)
}

// joinReader reads the ring buffer of reports until stop.
type joinReader struct {
	r    *ringbuf.Reader
	done chan struct{}
}

// startJoins opens the reader of the program's reports and starts its
// goroutine.
func (f *FastPath) startJoins() (*joinReader, error) {
	r, err := ringbuf.NewReader(f.maps.DivertJoins)
	if err != nil {
		return nil, fmt.Errorf("divert joins ring buffer: %w", err)
	}
	j := &joinReader{r: r, done: make(chan struct{})}
	go f.readJoins(j)
	return j, nil
}

// stop closes the reader and waits for its goroutine (nil: nothing).
func (j *joinReader) stop() error {
	if j == nil {
		return nil
	}
	err := j.r.Close()
	<-j.done
	return err
}

// readJoins hands each report to its Divert until the reader closes.
func (f *FastPath) readJoins(j *joinReader) {
	defer close(j.done)
	var rec ringbuf.Record
	for {
		if err := j.r.ReadInto(&rec); err != nil {
			if errors.Is(err, ringbuf.ErrClosed) {
				return
			}
			f.log.Warn("divert: reading the XDP program's join reports", "err", err)
			return
		}
		key, src, ok := parseJoin(rec.RawSample)
		if !ok {
			continue
		}
		f.dv.mu.Lock()
		d := f.dv.owner[key]
		f.dv.mu.Unlock()
		if d != nil {
			d.joined(key, src)
		}
	}
}

// parseJoin reads a struct divert_join (little-endian: the program is
// bpfel).
func parseJoin(b []byte) (querydDivertKey, netip.AddrPort, bool) {
	if len(b) < joinSize {
		return querydDivertKey{}, netip.AddrPort{}, false
	}
	var k querydDivertKey
	copy(k.Addr[:], b[:16])
	k.Port = binary.LittleEndian.Uint16(b[16:])
	src := netip.AddrFrom16([16]byte(b[20:36])).Unmap()
	return k, netip.AddrPortFrom(src, binary.LittleEndian.Uint16(b[36:])), true
}

// joined calls OnJoin's function with the divert address of key as the
// config gave it.
func (d *Divert) joined(key querydDivertKey, src netip.AddrPort) {
	fn := d.join.Load()
	if fn == nil {
		return
	}
	for _, a := range d.addrs {
		if divertKey(a.Game) == key {
			(*fn)(a.Game, src)
			return
		}
	}
}

// JoinCounts are one server's join reports (queryd_xdp_divert_joins_total).
type JoinCounts struct {
	Reported, RingFull, Limited uint64
}

// Joins sums the program's join counters of the server over the CPUs.
func (d *Divert) Joins() (JoinCounts, error) {
	var per []querydDivertJoinCount
	if err := d.f.maps.DivertJoinStats.Lookup(uint32(d.index), &per); err != nil {
		return JoinCounts{}, err
	}
	var c JoinCounts
	for _, p := range per {
		c.Reported += p.N[querydDivertJoinResultDIVERT_JOIN_REPORTED]
		c.RingFull += p.N[querydDivertJoinResultDIVERT_JOIN_FULL]
		c.Limited += p.N[querydDivertJoinResultDIVERT_JOIN_LIMITED]
	}
	return c, nil
}

// collectJoins exports the server's join counters.
func (d *Divert) collectJoins(ch chan<- prometheus.Metric) {
	n, err := d.Joins()
	if err != nil {
		return
	}
	for _, r := range []struct {
		label string
		n     uint64
	}{{"reported", n.Reported}, {"ring_full", n.RingFull}, {"rate_limited", n.Limited}} {
		ch <- prometheus.MustNewConstMetric(descDivertJoins, prometheus.CounterValue, float64(r.n), r.label)
	}
}
