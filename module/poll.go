package module

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// Poller is implemented by a module whose client can ask a stock game
// server for its whole state: [upstream] protocol names such a module, and
// package upstream polls the game server through it. It is found by type
// assertion, as FastPath is.
type Poller interface {
	// Name is the module's name ([upstream] protocol, "a2s").
	Name() string
	// Poll asks the game server at server once and maps its answer to a
	// state document (see Polled). Every poll opens its own sockets
	// (PollConn: a new random source port), drops what arrives before a
	// request is sent (Drain), checks the protocol's nonce where it has one,
	// and drops replies it cannot read while it waits (a forged or junk
	// datagram costs the poll nothing but time). It ends when ctx does. An
	// error that wraps a BadAnswer (or ErrOnlyChallenges) says something
	// came that could not be used; any other error, that nothing came.
	Poll(ctx context.Context, server netip.AddrPort, opts PollOptions) (Polled, error)
}

// PollOptions are what the poller passes every Poll.
type PollOptions struct {
	// Timeout is how long each request of the poll may wait for its answer.
	Timeout time.Duration
	// OwnAddress says that queryd's address is the game's (relay mode):
	// the mapping leaves out the address and ports the game server reports
	// in its protocol object (GameSpy4's hostip, the Bedrock pong's IPv6
	// port); the poller itself drops "game_port".
	OwnAddress bool
}

// Polled is one poll's answer.
type Polled struct {
	// Doc is the answer as a state document, valid whatever the game
	// server sent: the state's common fields; the server's own rules
	// (A2S_RULES, cvars, extra keys) and nothing else as "rules"; what
	// only its protocol shows in that protocol's object ("a2s", …, whose
	// "other" keeps what no field can carry). Players are keyed by their
	// place in the answer ("0", "1", …): the poller gives them stable ids,
	// unless OwnIDs.
	Doc map[string]any
	// OwnIDs says that Doc's players are keyed by the game server's own
	// stable ids (SAGL's), which the poller keeps.
	OwnIDs bool
	// Unanswered names the top-level fields of Doc whose request went
	// unanswered this time ("players", "rules"): the poller keeps their
	// last answers. Empty when the answer is whole.
	Unanswered []string
	// Partial says why part of the answer is missing (nil when whole).
	Partial error
}

// PollConn opens the socket of one poll (or of one request of it):
// connected to server, on a new random source port, so that only server's
// address can answer and a spoofer must guess the port anew every poll.
// When server is on loopback, the socket is bound to 127.0.0.1 (or ::1)
// explicitly: relay mode binds its client sessions to other addresses of
// 127.0.0.0/8, so the poll is never mistaken for a relayed client.
func PollConn(server netip.AddrPort) (*net.UDPConn, error) {
	var local *net.UDPAddr
	switch a := server.Addr().Unmap(); {
	case a.Is4() && a.IsLoopback():
		local = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}
	case a.IsLoopback():
		local = &net.UDPAddr{IP: net.IPv6loopback}
	}
	c, err := net.DialUDP("udp", local, net.UDPAddrFromAddrPort(server))
	if err != nil {
		return nil, fmt.Errorf("poll %s: %w", server, err)
	}
	Drain(c) // what came between bind and connect, from anyone
	return c, nil
}

// CloseOnDone closes c when ctx ends (a poll in progress is cut short);
// the returned stop undoes that.
func CloseOnDone(ctx context.Context, c *net.UDPConn) (stop func() bool) {
	return context.AfterFunc(ctx, func() { c.Close() })
}

// maxDrain bounds one Drain: more than a socket's default receive buffer
// holds of the smallest datagrams.
const maxDrain = 4096
