package hostile

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Source is a UDP socket bound to one loopback address, standing for one
// client (or one spoofed victim): it counts what it sends and what comes back.
type Source struct {
	Addr     string
	conn     *net.UDPConn
	dst      *net.UDPAddr
	sent     atomic.Int64 // bytes sent
	sentN    atomic.Int64 // datagrams sent
	recv     atomic.Int64 // bytes received
	recvN    atomic.Int64 // datagrams received
	lastRecv atomic.Int64 // unix nanoseconds of the last datagram received
	done     sync.WaitGroup
}

// sourceIP returns the i-th address of a /16 block of 127.0.0.0/8 chosen by
// block (1 to 255), skipping 127.0.0.0/16 where the daemon and the legitimate
// clients live.
func sourceIP(block, i int) string {
	return fmt.Sprintf("127.%d.%d.%d", block, (i+1)>>8&255, (i+1)&255)
}

// NewSource binds a socket to ip (any port) that talks to dst and counts
// every datagram it gets back; it closes when t ends.
func NewSource(t testing.TB, ip, dst string) *Source {
	t.Helper()
	ua, err := net.ResolveUDPAddr("udp4", dst)
	if err != nil {
		t.Fatalf("resolve %s: %v", dst, err)
	}
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(ip)})
	if err != nil {
		t.Fatalf("bind %s: %v", ip, err)
	}
	c.SetReadBuffer(1 << 20)
	s := &Source{Addr: ip, conn: c, dst: ua}
	s.done.Add(1)
	go s.read()
	t.Cleanup(s.Close)
	return s
}

func (s *Source) read() {
	defer s.done.Done()
	buf := make([]byte, 65536)
	for {
		n, _, err := s.conn.ReadFromUDP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // ICMP errors and the like
		}
		s.recv.Add(int64(n))
		s.recvN.Add(1)
		s.lastRecv.Store(time.Now().UnixNano())
	}
}

// Send sends one datagram to the daemon.
func (s *Source) Send(p []byte) error {
	_, err := s.conn.WriteToUDP(p, s.dst)
	if err == nil {
		s.sent.Add(int64(len(p)))
		s.sentN.Add(1)
	}
	return err
}

// Close closes the socket and waits for its reader.
func (s *Source) Close() {
	s.conn.Close()
	s.done.Wait()
}

// waitQuiet waits until none of sources has received anything for quiet
// (counted from the call at the earliest: replies still on their way are
// waited for), or until limit has passed.
func waitQuiet(sources []*Source, quiet, limit time.Duration) {
	start := time.Now()
	deadline := start.Add(limit)
	for time.Now().Before(deadline) {
		time.Sleep(quiet / 4)
		last := start.UnixNano()
		for _, s := range sources {
			last = max(last, s.lastRecv.Load())
		}
		if time.Since(time.Unix(0, last)) >= quiet {
			return
		}
	}
}

// pacer spreads n events evenly over a duration; Wait blocks until the
// i-th event is due (sleeping in steps of at least a millisecond).
type pacer struct {
	start time.Time
	every time.Duration
}

// newPacer starts a pacer for perSecond events a second, from now.
func newPacer(perSecond float64) pacer {
	return pacer{start: time.Now(), every: time.Duration(float64(time.Second) / perSecond)}
}

// Wait blocks until the i-th event is due.
func (p pacer) Wait(i int) {
	due := p.start.Add(time.Duration(i) * p.every)
	if d := time.Until(due); d > time.Millisecond {
		time.Sleep(d)
	}
}
