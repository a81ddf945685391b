package sagl

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// Info is the decoded JSON of a query (the fields the spec names).
type Info struct {
	Query       int               `json:"query"`
	Name        string            `json:"name"`
	Version     string            `json:"version"`
	Protocol    int               `json:"protocol"`
	Players     *Players          `json:"players,omitempty"`
	Branding    InfoBranding      `json:"branding"`
	Description string            `json:"description,omitempty"`
	Gamemode    string            `json:"gamemode,omitempty"`
	Language    string            `json:"language,omitempty"`
	Tags        []string          `json:"tags,omitempty"`
	Links       map[string]string `json:"links,omitempty"`
	Values      map[string]any    `json:"values,omitempty"`
}

// Players is the JSON's "players".
type Players struct {
	Online    int          `json:"online"`
	Max       int          `json:"max"`
	List      []PlayerInfo `json:"list,omitempty"`
	Truncated bool         `json:"truncated,omitempty"`
}

// PlayerInfo is one entry of the players list.
type PlayerInfo struct {
	ID    uint32 `json:"id"`
	Name  string `json:"name"`
	Score int32  `json:"score"`
	// Ping is the round trip in ms; nil when the JSON has null (or no
	// ping): the server does not know it.
	Ping *int32 `json:"ping"`
}

// InfoBranding is the JSON's "branding".
type InfoBranding struct {
	Logo      *LogoRef `json:"logo"`
	Primary   *string  `json:"primary"`
	Secondary *string  `json:"secondary"`
	ShowName  bool     `json:"showName"`
}

// LogoRef is the logo's SHA-256 (hex) and size as the JSON gives them.
type LogoRef struct {
	SHA256 string `json:"sha256"`
	Size   int    `json:"size"`
}

// Result is one reassembled info reply.
type Result struct {
	JSON   []byte        // the JSON exactly as the server sent it
	Info   Info          // JSON decoded
	Serial uint32        // the serial its parts carried
	RTT    time.Duration // from the answered request to its first part
}

// LogoResult is a fetched logo, checked against its SHA-256.
type LogoResult struct {
	Data []byte // nil when the server has no logo
	Sum  [32]byte
	RTT  time.Duration // from the first piece request to its reply
}

// Client asks one server SAGL queries over UDP. It answers challenges,
// reassembles parts and asks again for what got lost. It is not safe for
// concurrent use.
type Client struct {
	conn *net.UDPConn
	// Timeout bounds each Info or Logo call; 0 means 1.5 s.
	Timeout time.Duration
	// Retry is how long to wait for replies before asking again; 0 means 250 ms.
	Retry time.Duration
	token uint32
	buf   []byte
	// tokenFirst drops info parts until a request with a token was sent
	// (a poll's rule: a SAGL server answers a request without one only
	// with a challenge).
	tokenFirst bool
}

// Dial makes a client for the server at addr ("host:port").
func Dial(addr string) (*Client, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("sagl: resolve %s: %w", addr, err)
	}
	c, err := net.DialUDP("udp", nil, ua)
	if err != nil {
		return nil, fmt.Errorf("sagl: dial %s: %w", addr, err)
	}
	return &Client{conn: c, buf: make([]byte, 65536)}, nil
}

// Close closes the client's socket.
func (c *Client) Close() error { return c.conn.Close() }

func (c *Client) timeouts() (deadline time.Time, retry time.Duration) {
	t, r := c.Timeout, c.Retry
	if t <= 0 {
		t = 1500 * time.Millisecond
	}
	if r <= 0 {
		r = 250 * time.Millisecond
	}
	return time.Now().Add(t), r
}

func (c *Client) send(kind byte, offset uint32) error {
	var b [RequestSize]byte
	if _, err := c.conn.Write(AppendRequest(b[:0], Request{Kind: kind, Token: c.token, Offset: offset})); err != nil {
		return fmt.Errorf("sagl: send: %w", err)
	}
	return nil
}

// read waits for one reply until t. It returns nil, nil when t passes.
func (c *Client) read(t time.Time) ([]byte, error) {
	c.conn.SetReadDeadline(t)
	n, err := c.conn.Read(c.buf)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, nil
		}
		return nil, fmt.Errorf("sagl: receive: %w", err)
	}
	return c.buf[:n], nil
}

// challenged reports whether p is a challenge; ask is true when it brings
// a new token (taken), to send again with. The maxChallenges-th new token
// ends the call with ErrOnlyChallenges.
func (c *Client) challenged(p []byte, t *tally) (challenge, ask bool, err error) {
	tok, ok := parseToken(p)
	if !ok {
		return false, false, nil
	}
	t.challenges++
	if tok == c.token {
		return true, false, nil
	}
	if t.tokens++; t.tokens == maxChallenges {
		return true, false, ErrOnlyChallenges
	}
	c.token = tok
	return true, true, nil
}

// oversized notes a datagram over the protocol's MaxDatagram bytes.
func oversized(p []byte, t *tally) bool {
	if len(p) > MaxDatagram {
		t.drop(fmt.Sprintf("datagram of %d bytes, over the protocol's %d", len(p), MaxDatagram))
		return true
	}
	return false
}

// Info asks for the JSON and reassembles its parts. When a part with a new
// serial arrives, the JSON changed in between: it starts again from that one.
// Datagrams over 1,200 bytes, and parts that do not fit their JSON, are
// dropped; the call ends by Timeout.
func (c *Client) Info() (*Result, error) {
	deadline, retry := c.timeouts()
	var asm assembly
	var t tally
	var rtt time.Duration
	for time.Now().Before(deadline) {
		sent := time.Now()
		if err := c.send(KindInfo, 0); err != nil {
			return nil, err
		}
		wait := earliest(sent.Add(retry), deadline)
		for {
			p, err := c.read(wait)
			if err != nil {
				return nil, err
			}
			if p == nil {
				break // ask again
			}
			if oversized(p, &t) {
				continue
			}
			challenge, ask, err := c.challenged(p, &t)
			if err != nil {
				return nil, err
			}
			if ask {
				break // ask again with the new token
			}
			if challenge {
				continue
			}
			if c.tokenFirst && c.token == 0 && isInfoPart(p) { // no request with a token was sent: no info answers one
				t.drop("an info part before any request with a token")
				continue
			}
			if why := asm.add(p); why != "" {
				t.drop(why)
				continue
			}
			if rtt == 0 {
				rtt = time.Since(sent)
			}
			if js := asm.done(); js != nil {
				serial := asm.serial
				asm = assembly{} // the parts are garbage now: only the JSON is decoded
				return newResult(js, serial, rtt, deadline)
			}
			wait = earliest(time.Now().Add(retry), deadline)
		}
	}
	return nil, t.failure(asm.progress())
}

// isInfoPart reports whether p has an info part's header.
func isInfoPart(p []byte) bool {
	return len(p) >= InfoHeader && [4]byte(p[:4]) == replyMagic && p[4] == Version && p[5] == KindInfo
}

// assembly collects the parts of one serial: at most its total bytes, one
// allocation per part received (a header alone allocates nothing more).
type assembly struct {
	serial uint32
	total  int
	parts  int
	got    map[int][]byte
	size   int
}

// add takes one info reply; it returns why p is not a usable part ("" when
// it is one).
func (a *assembly) add(p []byte) string {
	if len(p) < InfoHeader || [4]byte(p[:4]) != replyMagic || p[4] != Version || p[5] != KindInfo {
		return fmt.Sprintf("reply of %d bytes that is not an info part", len(p))
	}
	serial := binary.LittleEndian.Uint32(p[8:])
	total := int(binary.LittleEndian.Uint32(p[12:]))
	part, parts := int(binary.LittleEndian.Uint16(p[16:])), int(binary.LittleEndian.Uint16(p[18:]))
	data := p[InfoHeader:]
	switch {
	case parts == 0 || part >= parts:
		return fmt.Sprintf("info part %d of %d", part, parts)
	case total > MaxJSON:
		return fmt.Sprintf("JSON of %d bytes, over the client's %d", total, MaxJSON)
	case total > parts*PartSize:
		return fmt.Sprintf("JSON of %d bytes in %d parts of at most %d", total, parts, PartSize)
	case len(data) > PartSize:
		return fmt.Sprintf("info part of %d bytes, over %d", len(data), PartSize)
	}
	if a.got == nil || serial != a.serial || parts != a.parts || total != a.total {
		*a = assembly{serial: serial, total: total, parts: parts, got: map[int][]byte{}}
	}
	if _, dup := a.got[part]; dup {
		return ""
	}
	if a.size+len(data) > total {
		return fmt.Sprintf("info parts adding up past the JSON's %d bytes", total)
	}
	a.got[part] = append([]byte{}, data...)
	a.size += len(data)
	return ""
}

// done returns the JSON once every part is in and the lengths add up.
func (a *assembly) done() []byte {
	if a.got == nil || len(a.got) != a.parts || a.size != a.total {
		return nil
	}
	js := make([]byte, 0, a.total)
	for i := range a.parts {
		js = append(js, a.got[i]...)
	}
	return js
}

// progress says how far the assembly got ("" before the first part).
func (a *assembly) progress() string {
	if a.got == nil {
		return ""
	}
	return fmt.Sprintf("%d of %d parts", len(a.got), a.parts)
}

// logoWindow is how many pieces Logo asks for at once.
const logoWindow = 16

// Logo fetches the logo piece by piece and checks it against its SHA-256.
// It returns a result with nil Data when the server has no logo. The first
// piece fixes the size and hash: pieces of another logo, datagrams over
// 1,200 bytes and logos over MaxLogo are dropped; the call ends by Timeout.
func (c *Client) Logo() (*LogoResult, error) {
	deadline, retry := c.timeouts()
	var f logoFetch
	var t tally
	for time.Now().Before(deadline) {
		offs := f.missing(logoWindow)
		sent := time.Now()
		for _, off := range offs {
			if err := c.send(KindLogo, off); err != nil {
				return nil, err
			}
		}
		if err := c.collect(&f, &t, len(offs), earliest(sent.Add(retry), deadline)); err != nil {
			return nil, err
		}
		if f.rtt == 0 && f.known {
			f.rtt = time.Since(sent)
		}
		if f.known && f.size == 0 {
			return &LogoResult{RTT: f.rtt}, nil
		}
		if data := f.done(); data != nil {
			if sha256.Sum256(data) != f.sum {
				return nil, badAnswer("the logo does not match its SHA-256 %s", hex.EncodeToString(f.sum[:]))
			}
			return &LogoResult{Data: data, Sum: f.sum, RTT: f.rtt}, nil
		}
	}
	return nil, t.failure(f.progress())
}

// collect reads logo replies into f until n arrived, a new token came, or wait.
func (c *Client) collect(f *logoFetch, t *tally, n int, wait time.Time) error {
	for got := 0; got < n; {
		p, err := c.read(wait)
		if err != nil || p == nil {
			return err
		}
		if oversized(p, t) {
			continue
		}
		challenge, ask, err := c.challenged(p, t)
		if err != nil || ask {
			return err
		}
		if challenge {
			continue
		}
		if why := f.add(p); why != "" {
			t.drop(why)
			continue
		}
		got++
	}
	return nil
}

// logoFetch collects the pieces of one logo: the size and hash of the first
// piece received, its bytes in one buffer of that size.
type logoFetch struct {
	known bool
	size  int
	sum   [32]byte
	data  []byte
	have  []bool // by piece
	got   int
	rtt   time.Duration
}

// missing returns up to n offsets still to ask for (offset 0 first).
func (f *logoFetch) missing(n int) []uint32 {
	if !f.known {
		return []uint32{0}
	}
	var out []uint32
	for i, ok := range f.have {
		if !ok && len(out) < n {
			out = append(out, uint32(i*LogoPiece))
		}
	}
	return out
}

// add takes one logo reply; it returns why p is not a usable piece ("" when
// it is one).
func (f *logoFetch) add(p []byte) string {
	if len(p) < LogoHeader || [4]byte(p[:4]) != replyMagic || p[4] != Version || p[5] != KindLogo {
		return fmt.Sprintf("reply of %d bytes that is not a logo piece", len(p))
	}
	size := int(binary.LittleEndian.Uint32(p[8:]))
	off := int(binary.LittleEndian.Uint32(p[12:]))
	sum := [32]byte(p[16:48])
	data := p[LogoHeader:]
	switch {
	case size > MaxLogo:
		return fmt.Sprintf("logo of %d bytes, over the client's %d", size, MaxLogo)
	case f.known && (size != f.size || sum != f.sum):
		return "logo piece of another logo (its size or SHA-256 differs from the first piece's)"
	case size > 0 && (off%LogoPiece != 0 || off >= size || len(data) != min(LogoPiece, size-off)):
		return fmt.Sprintf("logo piece at offset %d of %d bytes does not fit a logo of %d", off, len(data), size)
	}
	if !f.known {
		*f = logoFetch{known: true, size: size, sum: sum, rtt: f.rtt,
			data: make([]byte, size), have: make([]bool, (size+LogoPiece-1)/LogoPiece)}
	}
	if i := off / LogoPiece; size > 0 && !f.have[i] {
		copy(f.data[off:], data)
		f.have[i] = true
		f.got++
	}
	return ""
}

// done returns the logo once every piece is in.
func (f *logoFetch) done() []byte {
	if !f.known || f.size == 0 || f.got != len(f.have) {
		return nil
	}
	return f.data
}

// progress says how far the fetch got ("" before the first piece).
func (f *logoFetch) progress() string {
	if !f.known {
		return ""
	}
	return fmt.Sprintf("%d of %d logo pieces", f.got, len(f.have))
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
