package sagl

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
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
	Ping  int32  `json:"ping"`
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
}

// maxJSON bounds what a client accepts as the JSON's total length.
const maxJSON = 16 << 20

var errTimeout = errors.New("sagl: no complete answer in time")

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

// challenged takes the token from a challenge reply, if p is one.
func (c *Client) challenged(p []byte) bool {
	tok, ok := parseToken(p)
	if ok {
		c.token = tok
	}
	return ok
}

// Info asks for the JSON and reassembles its parts. When a part with a new
// serial arrives, the JSON changed in between: it starts again from that one.
func (c *Client) Info() (*Result, error) {
	deadline, retry := c.timeouts()
	var asm assembly
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
			if p == nil || c.challenged(p) {
				break // ask again (with the new token)
			}
			if !asm.add(p) {
				continue
			}
			if rtt == 0 {
				rtt = time.Since(sent)
			}
			if js := asm.done(); js != nil {
				return newResult(js, asm.serial, rtt)
			}
			wait = earliest(time.Now().Add(retry), deadline)
		}
	}
	return nil, errTimeout
}

func newResult(js []byte, serial uint32, rtt time.Duration) (*Result, error) {
	r := &Result{JSON: js, Serial: serial, RTT: rtt}
	if err := json.Unmarshal(js, &r.Info); err != nil {
		return nil, fmt.Errorf("sagl: the reassembled JSON: %w", err)
	}
	return r, nil
}

// assembly collects the parts of one serial.
type assembly struct {
	serial uint32
	total  int
	parts  [][]byte
	got    int
	size   int
}

// add takes one info reply; it reports whether p was a usable part.
func (a *assembly) add(p []byte) bool {
	if len(p) < InfoHeader || [4]byte(p[:4]) != replyMagic || p[4] != Version || p[5] != KindInfo {
		return false
	}
	serial := binary.LittleEndian.Uint32(p[8:])
	total := int(binary.LittleEndian.Uint32(p[12:]))
	part, parts := int(binary.LittleEndian.Uint16(p[16:])), int(binary.LittleEndian.Uint16(p[18:]))
	if parts == 0 || part >= parts || total > maxJSON || total > parts*PartSize {
		return false
	}
	if a.parts == nil || serial != a.serial || parts != len(a.parts) || total != a.total {
		*a = assembly{serial: serial, total: total, parts: make([][]byte, parts)}
	}
	if a.parts[part] == nil {
		a.parts[part] = append([]byte{}, p[InfoHeader:]...)
		a.got++
		a.size += len(a.parts[part])
	}
	return true
}

// done returns the JSON once every part is in and the lengths add up.
func (a *assembly) done() []byte {
	if a.got != len(a.parts) || a.size != a.total {
		return nil
	}
	js := make([]byte, 0, a.total)
	for _, p := range a.parts {
		js = append(js, p...)
	}
	return js
}

// logoWindow is how many pieces Logo asks for at once.
const logoWindow = 16

// Logo fetches the logo piece by piece and checks it against its SHA-256.
// It returns a result with nil Data when the server has no logo.
func (c *Client) Logo() (*LogoResult, error) {
	deadline, retry := c.timeouts()
	var f logoFetch
	for time.Now().Before(deadline) {
		offs := f.missing(logoWindow)
		sent := time.Now()
		for _, off := range offs {
			if err := c.send(KindLogo, off); err != nil {
				return nil, err
			}
		}
		if err := c.collect(&f, len(offs), earliest(sent.Add(retry), deadline)); err != nil {
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
				return nil, fmt.Errorf("sagl: logo does not match its SHA-256 %s", hex.EncodeToString(f.sum[:]))
			}
			return &LogoResult{Data: data, Sum: f.sum, RTT: f.rtt}, nil
		}
	}
	return nil, errTimeout
}

// collect reads logo replies into f until n arrived, a challenge came, or wait.
func (c *Client) collect(f *logoFetch, n int, wait time.Time) error {
	for got := 0; got < n; {
		p, err := c.read(wait)
		if err != nil || p == nil || c.challenged(p) {
			return err
		}
		if f.add(p) {
			got++
		}
	}
	return nil
}

// logoFetch collects the pieces of one logo (one size and hash).
type logoFetch struct {
	known  bool
	size   int
	sum    [32]byte
	pieces [][]byte
	got    int
	rtt    time.Duration
}

// missing returns up to n offsets still to ask for (offset 0 first).
func (f *logoFetch) missing(n int) []uint32 {
	if !f.known {
		return []uint32{0}
	}
	var out []uint32
	for i, p := range f.pieces {
		if p == nil && len(out) < n {
			out = append(out, uint32(i*LogoPiece))
		}
	}
	return out
}

// add takes one logo reply; a new size or hash starts the fetch again.
func (f *logoFetch) add(p []byte) bool {
	if len(p) < LogoHeader || [4]byte(p[:4]) != replyMagic || p[4] != Version || p[5] != KindLogo {
		return false
	}
	size := int(binary.LittleEndian.Uint32(p[8:]))
	off := int(binary.LittleEndian.Uint32(p[12:]))
	sum := [32]byte(p[16:48])
	if size > maxJSON*4 {
		return false
	}
	if !f.known || size != f.size || sum != f.sum {
		*f = logoFetch{known: true, size: size, sum: sum, rtt: f.rtt,
			pieces: make([][]byte, (size+LogoPiece-1)/LogoPiece)}
	}
	data := p[LogoHeader:]
	if size == 0 || off%LogoPiece != 0 || off >= size || len(data) != min(LogoPiece, size-off) {
		return size == 0
	}
	if i := off / LogoPiece; f.pieces[i] == nil {
		f.pieces[i] = append([]byte{}, data...)
		f.got++
	}
	return true
}

// done returns the logo once every piece is in.
func (f *logoFetch) done() []byte {
	if !f.known || f.size == 0 || f.got != len(f.pieces) {
		return nil
	}
	data := make([]byte, 0, f.size)
	for _, p := range f.pieces {
		data = append(data, p...)
	}
	return data
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
