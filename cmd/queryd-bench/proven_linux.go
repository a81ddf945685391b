package main

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
	"time"
)

// provenClient is flood's -proven client: a source that proves its
// address before the flood (an A2S_INFO answered to its token) and then,
// rate times a second while the flood runs, asks as real A2S clients do: a
// challenge, then A2S_INFO with its token. It counts the queries asked and
// those answered with the INFO (issue 43: proven sources first).
type provenClient struct {
	c             *net.UDPConn
	asked, answer atomic.Uint64
	buf           []byte
}

// a2sInfoReq is A2S_INFO without a token.
var a2sInfoReq = []byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00")

// newProvenClient dials dst from src and proves src with one query.
func newProvenClient(src netip.Addr, dst netip.AddrPort) (*provenClient, error) {
	c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(src, 0)), net.UDPAddrFromAddrPort(dst))
	if err != nil {
		return nil, fmt.Errorf("-proven: %w", err)
	}
	p := &provenClient{c: c, buf: make([]byte, 1500)}
	for try := 0; try < 5; try++ {
		if p.query(time.Second) {
			return p, nil
		}
	}
	c.Close()
	return nil, fmt.Errorf("-proven: %s got no A2S_INFO from %s", src, dst)
}

// query asks a challenge and the INFO with its token, each waiting at most
// wait, and reports whether the INFO came.
func (p *provenClient) query(wait time.Duration) bool {
	r := p.exchange(a2sInfoReq, wait)
	if len(r) != 9 || r[4] != 'A' {
		return false
	}
	r = p.exchange(append(append([]byte{}, a2sInfoReq...), r[5:9]...), wait)
	return len(r) > 9 && r[4] == 'I'
}

// exchange sends req and returns the first datagram back within wait
// (replies to an earlier request that come late are skipped when they do
// not fit: a challenge where the INFO is due, or the other way round).
func (p *provenClient) exchange(req []byte, wait time.Duration) []byte {
	if _, err := p.c.Write(req); err != nil {
		return nil
	}
	deadline := time.Now().Add(wait)
	for {
		p.c.SetReadDeadline(deadline)
		n, err := p.c.Read(p.buf)
		if err != nil {
			return nil
		}
		challenge := n == 9 && p.buf[4] == 'A'
		if challenge == (len(req) == len(a2sInfoReq)) && bytes.HasPrefix(p.buf[:n], []byte("\xFF\xFF\xFF\xFF")) {
			return p.buf[:n]
		}
	}
}

// run queries rate times a second until stop.
func (p *provenClient) run(rate int, stop *atomic.Bool) {
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for !stop.Load() {
		<-tick.C
		p.asked.Add(1)
		if p.query(200 * time.Millisecond) {
			p.answer.Add(1)
		}
	}
}
