package gamespy4

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/queryd/queryd/module"
)

// Basic is a decoded basic stat reply.
type Basic struct {
	MOTD       string `json:"motd"`
	GameType   string `json:"gametype"`
	Map        string `json:"map"`
	NumPlayers string `json:"numplayers"`
	MaxPlayers string `json:"maxplayers"`
	HostPort   uint16 `json:"hostport"`
	HostIP     string `json:"hostip"`
}

// Full is a decoded full stat reply.
type Full struct {
	Keys    [][2]string `json:"keys"`    // the key/value section, in reply order
	Players []string    `json:"players"` // the player section
}

// Get returns the value of key in the key/value section, "" when absent.
func (f *Full) Get(key string) string {
	for _, kv := range f.Keys {
		if kv[0] == key {
			return kv[1]
		}
	}
	return ""
}

// Client asks one server GameSpy4 queries over UDP. It is not safe for
// concurrent use.
type Client struct {
	conn    *net.UDPConn
	Timeout time.Duration // per request; 0 means 2 s
	Session [4]byte       // the session id sent (masked with 0x0F0F0F0F like real clients)
	buf     []byte
}

// Dial makes a client for the server at addr ("host:port").
func Dial(addr string) (*Client, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("gamespy4: resolve %s: %w", addr, err)
	}
	c, err := net.DialUDP("udp", nil, ua)
	if err != nil {
		return nil, fmt.Errorf("gamespy4: dial %s: %w", addr, err)
	}
	cl := &Client{conn: c, buf: make([]byte, 65536)}
	binary.BigEndian.PutUint32(cl.Session[:], uint32(time.Now().UnixNano())&0x0F0F0F0F)
	return cl, nil
}

// Close closes the client's socket.
func (c *Client) Close() error { return c.conn.Close() }

// Handshake asks for a challenge token.
func (c *Client) Handshake() (uint32, error) {
	p, err := c.ask(append([]byte{Magic[0], Magic[1], TypeHandshake}, c.Session[:]...), TypeHandshake)
	if err != nil {
		return 0, err
	}
	return ParseHandshake(p, c.Session)
}

// Basic performs a handshake and asks the basic stat.
func (c *Client) Basic() (*Basic, error) {
	p, err := c.stat(false)
	if err != nil {
		return nil, err
	}
	return ParseBasic(p, c.Session)
}

// Full performs a handshake and asks the full stat.
func (c *Client) Full() (*Full, error) {
	p, err := c.stat(true)
	if err != nil {
		return nil, err
	}
	return ParseFull(p, c.Session)
}

// stat performs a handshake and asks a stat with its token. A stat request
// answered with a handshake reply (a new token) is asked again with that
// token, up to maxChallenges tokens in all.
func (c *Client) stat(full bool) ([]byte, error) {
	tok, err := c.Handshake()
	if err != nil {
		return nil, fmt.Errorf("handshake: %w", err)
	}
	for tokens := 1; ; tokens++ { // the handshake's token is the first
		req := append([]byte{Magic[0], Magic[1], TypeStat}, c.Session[:]...)
		req = binary.BigEndian.AppendUint32(req, tok)
		if full {
			req = append(req, 0xFF, 0xFF, 0xFF, 0x01)
		}
		p, err := c.ask(req, TypeStat, TypeHandshake)
		if err != nil || p[0] == TypeStat {
			return p, err
		}
		if tokens+1 == maxChallenges { // p is the maxChallenges-th token
			return nil, ErrOnlyChallenges
		}
		if tok, err = ParseHandshake(p, c.Session); err != nil {
			return nil, err
		}
	}
}

// ask sends req and returns the first reply of one of the types wanted
// with this client's session id; other replies are dropped. It ends by
// Timeout: with a BadAnswerError when only dropped replies came.
func (c *Client) ask(req []byte, want ...byte) ([]byte, error) {
	t := c.Timeout
	if t <= 0 {
		t = 2 * time.Second
	}
	if err := c.conn.SetDeadline(time.Now().Add(t)); err != nil {
		return nil, fmt.Errorf("gamespy4: %w", err)
	}
	module.Drain(c.conn) // nothing that came before the request answers it
	if _, err := c.conn.Write(req); err != nil {
		return nil, fmt.Errorf("gamespy4: send: %w", err)
	}
	dropped, reason := 0, ""
	for {
		n, err := c.conn.Read(c.buf)
		if err != nil {
			if dropped > 0 && errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, badAnswer("%s (%d replies dropped)", reason, dropped)
			}
			return nil, fmt.Errorf("gamespy4: receive: %w", err)
		}
		p := c.buf[:n]
		switch {
		case n < HeaderLen:
			reason = fmt.Sprintf("reply of %d bytes is too short", n)
		case !bytes.Contains(want, p[:1]):
			reason = fmt.Sprintf("want reply type %#x, got %#x", want[0], p[0])
		case !bytes.Equal(p[1:HeaderLen], c.Session[:]):
			reason = fmt.Sprintf("session id % x, want % x", p[1:HeaderLen], c.Session[:])
		default:
			return append([]byte{}, p...), nil
		}
		dropped++
	}
}

// reader decodes reply fields.
type reader struct {
	b   []byte
	err error
}

func (r *reader) str() string {
	if r.err != nil {
		return ""
	}
	i := bytes.IndexByte(r.b, 0)
	if i < 0 {
		r.err = badAnswer("string without its NUL")
		return ""
	}
	s := string(r.b[:i])
	r.b = r.b[i+1:]
	return s
}

func (r *reader) fixed(n int) []byte {
	if r.err == nil && len(r.b) < n {
		r.err = badAnswer("reply cut short")
	}
	if r.err != nil {
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

// expect checks a reply's type byte and session id.
func expect(p []byte, typ byte, session [4]byte) (*reader, error) {
	if len(p) < HeaderLen {
		return nil, badAnswer("reply of %d bytes is too short", len(p))
	}
	if p[0] != typ {
		return nil, badAnswer("want reply type %#x, got %#x", typ, p[0])
	}
	if !bytes.Equal(p[1:HeaderLen], session[:]) {
		return nil, badAnswer("session id % x, want % x", p[1:HeaderLen], session[:])
	}
	return &reader{b: p[HeaderLen:]}, nil
}

// done reports the reader's error, or an error when bytes are left over.
func (r *reader) done() error {
	if r.err == nil && len(r.b) > 0 {
		r.err = badAnswer("%d bytes after the reply", len(r.b))
	}
	return r.err
}

// ParseHandshake decodes a handshake reply: the token as a decimal int32.
func ParseHandshake(p []byte, session [4]byte) (uint32, error) {
	r, err := expect(p, TypeHandshake, session)
	if err != nil {
		return 0, err
	}
	s := r.str()
	if err := r.done(); err != nil {
		return 0, err
	}
	tok, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, badAnswer("token %q is not a decimal int32", s)
	}
	return uint32(tok), nil
}

// ParseBasic decodes a basic stat reply, strictly: every field present and
// nothing after hostip.
func ParseBasic(p []byte, session [4]byte) (*Basic, error) {
	r, err := expect(p, TypeStat, session)
	if err != nil {
		return nil, err
	}
	b := &Basic{MOTD: r.str(), GameType: r.str(), Map: r.str(), NumPlayers: r.str(), MaxPlayers: r.str()}
	if port := r.fixed(2); port != nil {
		b.HostPort = binary.LittleEndian.Uint16(port)
	}
	b.HostIP = r.str()
	return b, r.done()
}

// ParseFull decodes a full stat reply, strictly: the splitnum and player_
// paddings exactly, and nothing after the player list's closing NUL.
func ParseFull(p []byte, session [4]byte) (*Full, error) {
	r, err := expect(p, TypeStat, session)
	if err != nil {
		return nil, err
	}
	if pad := r.fixed(len(splitnumHeader)); pad != nil && !bytes.Equal(pad, splitnumHeader) {
		return nil, badAnswer("full stat starts with % x, want splitnum padding", pad)
	}
	f := &Full{Keys: [][2]string{}, Players: []string{}}
	for r.err == nil {
		k := r.str()
		if k == "" {
			break
		}
		f.Keys = append(f.Keys, [2]string{k, r.str()})
	}
	if pad := r.fixed(len(playerHeader)); pad != nil && !bytes.Equal(pad, playerHeader) {
		return nil, badAnswer("player section starts with % x, want \\x01player_\\x00\\x00", pad)
	}
	for r.err == nil {
		name := r.str()
		if name == "" {
			break
		}
		f.Players = append(f.Players, name)
	}
	return f, r.done()
}
