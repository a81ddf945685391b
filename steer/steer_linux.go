//go:build linux

package steer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// cacheSlots is the size of Prove's cache of recent writes (a power of two).
const cacheSlots = 4096

// Steer is the proven map, shared by the program of every group it attaches.
type Steer struct {
	spec      *ebpf.CollectionSpec
	proven    *ebpf.Map
	provenFor time.Duration
	mono0     time.Duration // CLOCK_MONOTONIC (the program's clock) at t0
	t0        time.Time
	cache     [cacheSlots]slot
	failed    atomic.Uint64 // map writes the kernel refused
}

// slot remembers the last write of one source (by a fold of its key), so
// that a busy proven source costs a map write per proven_for/8, not per
// reply. A race between its two words costs at most one write too many or
// one refresh put off to the source's next proven reply.
type slot struct {
	key atomic.Uint64
	at  atomic.Int64 // monotonic ns of the write
}

// New makes the proven map (trackedIPs entries, LRU) for entries that last
// provenFor. It fails where the kernel refuses BPF (no CAP_BPF) or has no
// SK_REUSEPORT programs.
func New(trackedIPs int, provenFor time.Duration) (*Steer, error) {
	if trackedIPs < 1 || provenFor <= 0 {
		return nil, fmt.Errorf("steer: tracked IPs %d and proven_for %s must be positive", trackedIPs, provenFor)
	}
	spec, err := loadSteer()
	if err != nil {
		return nil, fmt.Errorf("steer: program spec: %w", err)
	}
	ms := spec.Maps["proven"].Copy()
	ms.MaxEntries = uint32(trackedIPs)
	m, err := ebpf.NewMap(ms)
	if err != nil {
		return nil, fmt.Errorf("steer: proven map: %w", err)
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		m.Close()
		return nil, fmt.Errorf("steer: clock: %w", err)
	}
	s := &Steer{spec: spec, proven: m, provenFor: provenFor, mono0: time.Duration(ts.Nano()), t0: time.Now()}
	if err := s.probe(); err != nil {
		m.Close()
		return nil, err
	}
	return s, nil
}

// probe loads the program and its socket arrays once and lets them go, so
// that New fails, not every Attach, where the kernel lets queryd make the
// map but not load the program.
func (s *Steer) probe() error {
	g, err := s.load(1, 1)
	if err != nil {
		return err
	}
	return g.Close()
}

// now is CLOCK_MONOTONIC, as bpf_ktime_get_ns reads it, without a system call.
func (s *Steer) now() time.Duration { return s.mono0 + time.Since(s.t0) }

// Prove marks ip's source (its IPv4 address, its IPv6 /64) proven for
// provenFor from now. It is the responder's OnProven: safe for concurrent
// use, and it never blocks; a busy source costs a map write every
// provenFor/8 at most.
func (s *Steer) Prove(ip netip.Addr) {
	if s == nil {
		return
	}
	k := keyOf(ip)
	now := s.now()
	f := fold(k)
	sl := &s.cache[f&(cacheSlots-1)]
	if sl.key.Load() == f && now-time.Duration(sl.at.Load()) < s.provenFor/8 {
		return
	}
	until := uint64(now + s.provenFor)
	if err := s.proven.Update(k, until, ebpf.UpdateAny); err != nil {
		s.failed.Add(1)
		return
	}
	sl.key.Store(f)
	sl.at.Store(int64(now))
}

// expire sets ip's entry to have run out (tests).
func (s *Steer) expire(ip netip.Addr) error {
	k := keyOf(ip)
	return s.proven.Update(k, uint64(s.now()-time.Second), ebpf.UpdateAny)
}

// fold is a 64-bit hash of k, never 0.
func fold(k [16]byte) uint64 {
	a, b := binary.LittleEndian.Uint64(k[:8]), binary.LittleEndian.Uint64(k[8:])
	return (a*0x9e3779b97f4a7c15^b)*0xbf58476d1ce4e5b9 | 1
}

// Close releases the proven map (the groups' programs keep their reference
// until their sockets close).
func (s *Steer) Close() error {
	if s == nil {
		return nil
	}
	return s.proven.Close()
}

// Group is the program and socket arrays of one reuseport group.
type Group struct {
	objs steerObjects
}

// Attach steers the reuseport group the sockets proven and ordinary belong
// to (one listen address: bound, SO_REUSEPORT, in the order given): proven
// sources to proven, the rest to ordinary. The program stays attached until
// every socket of the group is closed.
func (s *Steer) Attach(proven, ordinary []int) (*Group, error) {
	if len(proven) == 0 || len(ordinary) == 0 {
		return nil, errors.New("steer: attach needs sockets of both kinds")
	}
	g, err := s.load(len(proven), len(ordinary))
	if err != nil {
		return nil, err
	}
	if err := g.fill(proven, ordinary); err != nil {
		g.Close()
		return nil, err
	}
	if err := unix.SetsockoptInt(ordinary[0], unix.SOL_SOCKET, unix.SO_ATTACH_REUSEPORT_EBPF, g.objs.Steer.FD()); err != nil {
		g.Close()
		return nil, fmt.Errorf("steer: SO_ATTACH_REUSEPORT_EBPF: %w", err)
	}
	return g, nil
}

// load loads a group's program and socket arrays for np proven and no
// ordinary sockets, sharing the proven map.
func (s *Steer) load(np, no int) (*Group, error) {
	spec := s.spec.Copy()
	spec.Maps["proven"].MaxEntries = s.proven.MaxEntries()
	spec.Maps["proven_socks"].MaxEntries = uint32(np)
	spec.Maps["ordinary_socks"].MaxEntries = uint32(no)
	if err := spec.Variables["n_proven"].Set(uint32(np)); err != nil {
		return nil, fmt.Errorf("steer: n_proven: %w", err)
	}
	if err := spec.Variables["n_ordinary"].Set(uint32(no)); err != nil {
		return nil, fmt.Errorf("steer: n_ordinary: %w", err)
	}
	g := &Group{}
	opts := &ebpf.CollectionOptions{MapReplacements: map[string]*ebpf.Map{"proven": s.proven}}
	if err := spec.LoadAndAssign(&g.objs, opts); err != nil {
		return nil, fmt.Errorf("steer: load: %w", err)
	}
	return g, nil
}

// fill puts the sockets in the group's socket arrays.
func (g *Group) fill(proven, ordinary []int) error {
	for i, fd := range proven {
		if err := g.objs.ProvenSocks.Update(uint32(i), uint64(fd), ebpf.UpdateAny); err != nil {
			return fmt.Errorf("steer: proven socket %d: %w", i, err)
		}
	}
	for i, fd := range ordinary {
		if err := g.objs.OrdinarySocks.Update(uint32(i), uint64(fd), ebpf.UpdateAny); err != nil {
			return fmt.Errorf("steer: ordinary socket %d: %w", i, err)
		}
	}
	return nil
}

// Counts are the datagrams a group's program has steered.
type Counts struct {
	Proven   uint64 // to a proven socket
	Ordinary uint64 // to an ordinary socket
	Expired  uint64 // from a source whose entry had run out (counted in Ordinary too)
}

// Counts sums the program's per-CPU counters.
func (g *Group) Counts() (Counts, error) {
	var c Counts
	for i, dst := range []*uint64{&c.Proven, &c.Ordinary, &c.Expired} {
		var per []uint64
		if err := g.objs.Steered.Lookup(uint32(i), &per); err != nil {
			return c, fmt.Errorf("steer: counts: %w", err)
		}
		for _, n := range per {
			*dst += n
		}
	}
	return c, nil
}

// Close releases the group's program and maps (the kernel keeps what the
// attached group still uses).
func (g *Group) Close() error { return g.objs.Close() }
