package relay

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// handshakeGame is a stand-in for a Quake 3 server on loopback: it answers
// getchallenge with a challenge bound to the sender's address:port,
// connect with the right challenge with connectResponse, and game packets
// (not connectionless) only from a client that connected, with
// "game <the address it saw>". A blind spoofer never gets a game packet.
func handshakeGame(t *testing.T) netip.AddrPort {
	t.Helper()
	c := listenLoopback(t)
	go func() {
		challenges := map[netip.AddrPort]string{}
		connected := map[netip.AddrPort]bool{}
		buf := make([]byte, 2048)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			p := buf[:n]
			switch {
			case bytes.HasPrefix(p, []byte("\xFF\xFF\xFF\xFFgetchallenge")):
				ch := fmt.Sprint(rand.Uint32())
				challenges[from] = ch
				c.WriteToUDPAddrPort([]byte("\xFF\xFF\xFF\xFFchallengeResponse "+ch), from)
			case bytes.HasPrefix(p, []byte("\xFF\xFF\xFF\xFFconnect ")):
				if ch, ok := challenges[from]; ok && string(p[12:]) == ch {
					connected[from] = true
					c.WriteToUDPAddrPort([]byte("\xFF\xFF\xFF\xFFconnectResponse"), from)
				}
			case !connectionless(p) && connected[from]:
				c.WriteToUDPAddrPort([]byte("game "+from.String()), from)
			}
		}
	}()
	return udpAddr(c)
}

// player does a client's handshake through pub and then plays (a game
// packet every tick) until stop; it records what the game server saw.
type player struct {
	c    *net.UDPConn
	pub  netip.AddrPort
	mu   sync.Mutex
	seen map[string]int // the address the game server saw, by count of game replies
}

func newPlayer(t *testing.T, ip string, pub netip.AddrPort) *player {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(ip)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &player{c: c, pub: pub, seen: map[string]int{}}
}

// connect does getchallenge and connect, retrying, within limit.
func (p *player) connect(limit time.Duration) error {
	buf := make([]byte, 2048)
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		p.c.WriteToUDPAddrPort([]byte("\xFF\xFF\xFF\xFFgetchallenge"), p.pub)
		p.c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		n, _, err := p.c.ReadFromUDPAddrPort(buf)
		if err != nil || !bytes.HasPrefix(buf[:n], []byte("\xFF\xFF\xFF\xFFchallengeResponse ")) {
			continue
		}
		ch := string(buf[len("\xFF\xFF\xFF\xFFchallengeResponse "):n])
		p.c.WriteToUDPAddrPort([]byte("\xFF\xFF\xFF\xFFconnect "+ch), p.pub)
		n, _, err = p.c.ReadFromUDPAddrPort(buf)
		if err == nil && string(buf[:n]) == "\xFF\xFF\xFF\xFFconnectResponse" {
			return nil
		}
	}
	return fmt.Errorf("no connectResponse within %v", limit)
}

// play sends n game packets, one every tick, and counts the answers.
func (p *player) play(n int, tick time.Duration) int {
	got := 0
	buf := make([]byte, 2048)
	for range n {
		p.c.WriteToUDPAddrPort([]byte("move"), p.pub)
		p.c.SetReadDeadline(time.Now().Add(tick))
		k, _, err := p.c.ReadFromUDPAddrPort(buf)
		if err == nil && strings.HasPrefix(string(buf[:k]), "game ") {
			got++
			p.mu.Lock()
			p.seen[string(buf[5:k])]++
			p.mu.Unlock()
		}
		time.Sleep(tick - min(tick, time.Millisecond))
	}
	return got
}

func (r *Relay) stateOf(c netip.AddrPort) int32 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if s := r.bySrc[c]; s != nil {
		return s.state.Load()
	}
	return -1
}

// A session is fresh through the handshake (connectionless answers only),
// live once game traffic flows both ways and proven after ProveAfter of
// it; a client that only ever gets connectionless answers (all a blind
// spoofer can get) stays fresh; the feed's peer proves a session at once.
func TestRelayProof(t *testing.T) {
	r, _ := newTestRelay(t, Config{GameServer: handshakeGame(t), ProveAfter: 300 * time.Millisecond})
	pub := publicFront(t, r)
	p := newPlayer(t, "127.0.0.1", pub)
	if err := p.connect(3 * time.Second); err != nil {
		t.Fatal(err)
	}
	me := udpAddr(p.c)
	if st := r.stateOf(me); st != stateFresh {
		t.Fatalf("after the handshake the session is in state %d; want fresh", st)
	}
	p.play(3, 20*time.Millisecond)
	if st := r.stateOf(me); st != stateLive {
		t.Fatalf("after 3 game packets answered the session is in state %d; want live", st)
	}
	p.play(20, 25*time.Millisecond)
	if st := r.stateOf(me); st != stateProven {
		t.Fatalf("after 500 ms of game traffic the session is in state %d; want proven", st)
	}
	q := newPlayer(t, "127.0.0.1", pub) // asks for challenges only
	buf := make([]byte, 2048)
	for range 20 {
		q.c.WriteToUDPAddrPort([]byte("\xFF\xFF\xFF\xFFgetchallenge"), pub)
		q.c.SetReadDeadline(time.Now().Add(time.Second))
		q.c.ReadFromUDPAddrPort(buf)
		time.Sleep(25 * time.Millisecond)
	}
	if st := r.stateOf(udpAddr(q.c)); st != stateFresh {
		t.Errorf("a client answered only connectionless datagrams for 500 ms is in state %d; want fresh", st)
	}
	r.mu.RLock()
	local := r.bySrc[udpAddr(q.c)].addr
	r.mu.RUnlock()
	if c, l, err := r.Peer(int(local.Port()), local.Addr()); err != nil || c != udpAddr(q.c) || l != local {
		t.Fatalf("Peer(%d, %s) = %s, %s, %v", local.Port(), local.Addr(), c, l, err)
	}
	if st := r.stateOf(udpAddr(q.c)); st != stateProven {
		t.Errorf("a session the game server asked peer about is in state %d; want proven", st)
	}
}
