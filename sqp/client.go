package sqp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/queryd/queryd/module"
)

// MaxClientPayload is the most payload bytes the client reassembles from
// one reply's packets; a server sending more gets a *BadAnswerError.
const MaxClientPayload = 1 << 20

// Client asks one server SQP queries over UDP. It is not safe for
// concurrent use.
type Client struct {
	conn    *net.UDPConn
	Timeout time.Duration // per request; 0 means 2 s
	buf     []byte
	dropped int    // datagrams dropped since the last request
	reason  string // why the last of them was dropped
}

// Dial makes a client for the server at addr ("host:port").
func Dial(addr string) (*Client, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("sqp: resolve %s: %w", addr, err)
	}
	c, err := net.DialUDP("udp", nil, ua)
	if err != nil {
		return nil, fmt.Errorf("sqp: dial %s: %w", addr, err)
	}
	return &Client{conn: c, buf: make([]byte, 65536)}, nil
}

// Close closes the client's socket.
func (c *Client) Close() error { return c.conn.Close() }

// Challenge asks for a challenge token.
func (c *Client) Challenge() (uint32, error) {
	if err := c.send(ChallengeRequest[:]); err != nil {
		return 0, err
	}
	for {
		p, err := c.read()
		if err != nil {
			return 0, err
		}
		if tok, ok := challengeReply(p); ok {
			return tok, nil
		}
		c.drop("want a 5-byte challenge reply, got %d bytes of type %#x", len(p), p[0])
	}
}

// Query asks for a challenge, then for chunks (ChunkServerInfo | …), and
// returns the decoded reply, reassembled from all its packets. A query
// answered with a challenge is asked again with the new token, up to
// maxChallenges tokens in all.
func (c *Client) Query(chunks byte) (*Response, error) {
	tok, err := c.Challenge()
	if err != nil {
		return nil, fmt.Errorf("challenge: %w", err)
	}
	for tokens := 1; ; tokens++ { // the challenge's token is the first
		if err := c.send(AppendQuery(nil, tok, chunks)); err != nil {
			return nil, err
		}
		payload, next, err := c.reply(tok)
		if err != nil {
			return nil, err
		}
		if payload != nil {
			return ParseResponse(payload, chunks)
		}
		if tokens+1 == maxChallenges { // next is the maxChallenges-th token
			return nil, ErrOnlyChallenges
		}
		tok = next
	}
}

// reply reads the reply to a query sent with tok: its payload reassembled
// from every packet, or (nil payload) the token of a challenge reply.
// Datagrams of another type or token are dropped.
func (c *Client) reply(tok uint32) ([]byte, uint32, error) {
	a := assembler{token: tok}
	for {
		p, err := c.read()
		if err != nil {
			return nil, 0, err
		}
		if next, ok := challengeReply(p); ok && a.got == 0 {
			return nil, next, nil
		}
		h, _, err := ParseHeader(p)
		if err == nil && h.Token != tok {
			err = badAnswer("token %#08x, want %#08x", h.Token, tok)
		}
		if err != nil {
			c.drop("%s", err.(*BadAnswerError).What) // not this reply: maybe an old one
			continue
		}
		done, err := a.add(p)
		if err != nil {
			return nil, 0, err
		}
		if done {
			return a.payload(), 0, nil
		}
	}
}

// challengeReply returns the token of a challenge reply.
func challengeReply(p []byte) (uint32, bool) {
	if len(p) != ChallengeLen || p[0] != TypeChallenge {
		return 0, false
	}
	return binary.BigEndian.Uint32(p[1:]), true
}

func (c *Client) send(req []byte) error {
	t := c.Timeout
	if t <= 0 {
		t = 2 * time.Second
	}
	if err := c.conn.SetDeadline(time.Now().Add(t)); err != nil {
		return fmt.Errorf("sqp: %w", err)
	}
	c.dropped, c.reason = 0, ""
	module.Drain(c.conn) // nothing that came before the request answers it
	if _, err := c.conn.Write(req); err != nil {
		return fmt.Errorf("sqp: send: %w", err)
	}
	return nil
}

// read returns the next datagram (at least one byte) until the deadline
// send set: then a *BadAnswerError when only dropped replies came.
func (c *Client) read() ([]byte, error) {
	for {
		n, err := c.conn.Read(c.buf)
		if err != nil {
			if c.dropped > 0 && errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, badAnswer("%s (%d replies dropped)", c.reason, c.dropped)
			}
			return nil, fmt.Errorf("sqp: receive: %w", err)
		}
		if n > 0 {
			return c.buf[:n], nil
		}
		c.drop("empty datagram")
	}
}

// drop counts a datagram the client cannot use, and why.
func (c *Client) drop(format string, args ...any) {
	c.dropped++
	c.reason = fmt.Sprintf(format, args...)
}

// Header is a query reply packet's header.
type Header struct {
	Token   uint32
	Version uint16
	Current byte // this packet's number, from 0
	Last    byte // the last packet's number
	Length  uint16
}

// ParseHeader decodes a query reply packet's header and returns its
// payload, whose size must be the header's Length.
func ParseHeader(p []byte) (Header, []byte, error) {
	if len(p) < HeaderLen {
		return Header{}, nil, badAnswer("reply of %d bytes is too short", len(p))
	}
	if p[0] != TypeQuery {
		return Header{}, nil, badAnswer("want reply type %#x, got %#x", TypeQuery, p[0])
	}
	h := Header{
		Token:   binary.BigEndian.Uint32(p[1:5]),
		Version: binary.BigEndian.Uint16(p[5:7]),
		Current: p[7], Last: p[8],
		Length: binary.BigEndian.Uint16(p[9:11]),
	}
	if int(h.Length) != len(p)-HeaderLen {
		return Header{}, nil, badAnswer("payload length %d, but %d bytes follow the header", h.Length, len(p)-HeaderLen)
	}
	if h.Current > h.Last {
		return Header{}, nil, badAnswer("packet %d of 0 to %d", h.Current, h.Last)
	}
	return h, p[HeaderLen:], nil
}

// Reassemble returns the payload of a reply's packets (in any order), all
// carrying token.
func Reassemble(packets [][]byte, token uint32) ([]byte, error) {
	a := assembler{token: token}
	for i, p := range packets {
		done, err := a.add(p)
		if err != nil {
			return nil, err
		}
		if done {
			if i != len(packets)-1 {
				return nil, badAnswer("%d packets after the reply was complete", len(packets)-1-i)
			}
			return a.payload(), nil
		}
	}
	return nil, badAnswer("%d of %d packets", a.got, int(a.last)+1)
}

// assembler collects one reply's packets.
type assembler struct {
	token uint32
	last  byte
	got   int // packets collected
	size  int
	parts [256][]byte
}

// add takes one packet; done is true once every packet is there. A packet
// of another token, or one that contradicts the others, is a
// *BadAnswerError; a packet that came before is ignored.
func (a *assembler) add(p []byte) (done bool, err error) {
	h, payload, err := ParseHeader(p)
	switch {
	case err != nil:
		return false, err
	case h.Token != a.token:
		return false, badAnswer("token %#08x, want %#08x", h.Token, a.token)
	case h.Version != Version:
		return false, badAnswer("version %d, want %d", h.Version, Version)
	case a.got > 0 && h.Last != a.last:
		return false, badAnswer("packet %d says the last is %d, an earlier one %d", h.Current, h.Last, a.last)
	case a.parts[h.Current] != nil:
		return false, nil // a duplicate
	case a.size+len(payload) > MaxClientPayload:
		return false, badAnswer("reply larger than %d bytes", MaxClientPayload)
	}
	a.last = h.Last
	a.parts[h.Current] = append(make([]byte, 0, len(payload)+1), payload...) // never nil
	a.got++
	a.size += len(payload)
	return a.got == int(a.last)+1, nil
}

// payload joins the packets' payloads in order.
func (a *assembler) payload() []byte {
	b := make([]byte, 0, a.size)
	for _, p := range a.parts[:int(a.last)+1] {
		b = append(b, p...)
	}
	return b
}
