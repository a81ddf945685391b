package relay

import (
	"fmt"
	"net/netip"
	"testing"
	"time"
)

// forwardFrom sends one datagram from each of srcs and returns how many
// have a session afterwards.
func forwardFrom(r *Relay, srcs ...netip.AddrPort) int {
	for _, s := range srcs {
		r.Forward([]byte("x"), s, netip.Addr{}, nopSender)
	}
	n := 0
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, s := range srcs {
		if r.bySrc[s] != nil {
			n++
		}
	}
	return n
}

// playAll makes every open session live (as if the game server had sent
// each a game datagram and its client answered).
func playAll(r *Relay) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.bySrc {
		r.promoteLocked(s, stateLive)
	}
}

// A site (IPv4 /24, IPv6 /56, IPv6 /48) holds at most its share of
// max_sessions, however many sources it has; its sessions at the cap make
// way only for a newcomer of the same site once evictable; other sites get
// in.
func TestRelaySiteCaps(t *testing.T) {
	game := listenLoopback(t)
	r, reg := newTestRelay(t, Config{GameServer: udpAddr(game), MaxSessions: 256, MaxPerIP: 4,
		Share24: 1.0 / 32, Share56: 1.0 / 32, Share48: 1.0 / 16, LoadingGrace: time.Minute}) // caps 8, 8, 16
	var v4 []netip.AddrPort
	for i := range 20 {
		v4 = append(v4, netip.MustParseAddrPort(fmt.Sprintf("198.51.100.%d:27005", i+1)))
	}
	if n := forwardFrom(r, v4...); n != 8 {
		t.Fatalf("20 addresses of one /24: %d sessions; want the /24's 8", n)
	}
	if n := counter(t, reg, "queryd_relay_dropped_total", "site_full"); n != 12 {
		t.Errorf("%v dropped as site_full; want 12", n)
	}
	if forwardFrom(r, netip.MustParseAddrPort("198.51.101.1:27005")) != 1 {
		t.Error("an address of another /24 was not let in")
	}
	var v6 []netip.AddrPort // 4 /56s of one /48, 4 /64s each
	for i := range 16 {
		v6 = append(v6, netip.MustParseAddrPort(fmt.Sprintf("[2001:db8:7:%x%02x::1]:27005", i/4, i%4)))
	}
	if n := forwardFrom(r, v6[:4]...); n != 4 {
		t.Fatalf("4 /64s of one /56: %d sessions; want 4", n)
	}
	for i := range 4 { // each /64 fills its own 4: the /56 stops at 8
		for p := range 4 {
			forwardFrom(r, netip.AddrPortFrom(v6[i].Addr(), uint16(30000+p)))
		}
	}
	r.mu.RLock()
	in56 := len(r.sites[siteKey{netip.MustParsePrefix("2001:db8:7::/56").Addr().As16(), 56}].sessions)
	r.mu.RUnlock()
	if in56 != 8 {
		t.Errorf("the /56 holds %d sessions; want its cap of 8", in56)
	}
	if n := forwardFrom(r, v6[4:]...); n != 8 {
		t.Errorf("12 /64s of 3 more /56s of the /48: %d let in; want the /48's 16 less the first /56's 8", n)
	}
	if forwardFrom(r, netip.MustParseAddrPort("[2001:db8:8::1]:27005")) != 1 {
		t.Error("an address of another /48 was not let in")
	}
	// Quiet fresh sessions of a full site make way for its newcomers.
	time.Sleep(evictMinIdle + 50*time.Millisecond)
	if forwardFrom(r, netip.MustParseAddrPort("198.51.100.200:27005")) != 1 {
		t.Error("a newcomer of a full /24 whose sessions are quiet and fresh was not let in")
	}
	playAll(r)
	time.Sleep(evictMinIdle + 50*time.Millisecond)
	if forwardFrom(r, netip.MustParseAddrPort("198.51.100.201:27005")) != 0 {
		t.Error("a newcomer of a full /24 evicted a playing session quiet for less than loading_grace")
	}
}

// Sessions not yet proven hold at most max_sessions less the reserve;
// proven ones use the reserve, and a flood of newcomers evicts no proven
// session.
func TestRelayProvenReserve(t *testing.T) {
	game := listenLoopback(t)
	r, reg := newTestRelay(t, Config{GameServer: udpAddr(game), MaxSessions: 8, Reserve: 0.25, LoadingGrace: time.Minute})
	var first []netip.AddrPort
	for i := range 8 {
		first = append(first, netip.MustParseAddrPort(fmt.Sprintf("100.64.0.%d:27005", i+1)))
	}
	forwardFrom(r, first...)
	if r.Sessions() != 6 {
		t.Fatalf("8 new clients: %d sessions; want 6 (8 less a reserve of 2)", r.Sessions())
	}
	players := first[2:] // the last two evicted the oldest fresh ones
	if forwardFrom(r, players...) != 6 {
		t.Fatal("the 6 newest clients do not all have a session")
	}
	r.mu.Lock()
	for _, c := range players { // the game server confirms six players
		r.promoteLocked(r.bySrc[c], stateProven)
	}
	r.mu.Unlock()
	var flood []netip.AddrPort
	for i := range 100 {
		flood = append(flood, netip.MustParseAddrPort(fmt.Sprintf("203.0.113.%d:27005", i+1)))
	}
	forwardFrom(r, flood...)
	if n := forwardFrom(r, players...); n != 6 {
		t.Errorf("after 100 newcomers %d of the 6 proven sessions are left", n)
	}
	if r.Sessions() != 8 {
		t.Errorf("%d sessions; want 8 (6 proven, 2 newcomers in turn)", r.Sessions())
	}
	if n := counter(t, reg, "queryd_relay_sessions_evicted_total", ""); n != 2+98 {
		t.Errorf("%v evicted; want 100 (each newcomer but the first two evicts the oldest fresh one)", n)
	}
}

// A fresh session is kept from newcomers for freshHold: under a flood of
// new sources sessions open no faster than the fresh ones age, and a
// newcomer is dropped (cheaply: no socket) until the oldest is old enough.
func TestRelayFreshHold(t *testing.T) {
	game := listenLoopback(t)
	r, reg := newTestRelay(t, Config{GameServer: udpAddr(game), MaxSessions: 4})
	r.freshHold = 300 * time.Millisecond
	var srcs []netip.AddrPort
	for i := range 20 {
		srcs = append(srcs, netip.MustParseAddrPort(fmt.Sprintf("198.51.100.%d:27005", i+1)))
	}
	forwardFrom(r, srcs[:4]...)
	forwardFrom(r, srcs[4:10]...)
	if n := counter(t, reg, "queryd_relay_dropped_total", "sessions_full"); n != 6 || r.Sessions() != 4 {
		t.Fatalf("6 newcomers while 4 fresh sessions are younger than freshHold: %v dropped, %d sessions; want 6 and 4", n, r.Sessions())
	}
	time.Sleep(350 * time.Millisecond)
	if n := forwardFrom(r, srcs[10:14]...); n != 4 {
		t.Errorf("4 newcomers once the fresh sessions are past freshHold: %d let in; want 4", n)
	}
	if n := forwardFrom(r, srcs[14]); n != 0 {
		t.Errorf("a newcomer evicted a session just opened")
	}
}
