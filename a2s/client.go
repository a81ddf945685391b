package a2s

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"time"

	"github.com/queryd/queryd/module"
)

// Info is a decoded A2S_INFO reply.
type Info struct {
	Protocol     byte   `json:"protocol"`
	Name         string `json:"name"`
	Map          string `json:"map"`
	Folder       string `json:"folder"`
	Game         string `json:"game"`
	AppID        uint16 `json:"app_id"`
	Players      byte   `json:"players"`
	MaxPlayers   byte   `json:"max_players"`
	Bots         byte   `json:"bots"`
	ServerType   string `json:"server_type"`
	Environment  string `json:"environment"`
	Password     bool   `json:"password"`
	VAC          bool   `json:"vac"`
	Version      string `json:"version"`
	EDF          byte   `json:"edf"`
	Port         uint16 `json:"port,omitempty"`
	SteamID      uint64 `json:"steam_id,omitempty"`
	SourceTVPort uint16 `json:"sourcetv_port,omitempty"`
	SourceTVName string `json:"sourcetv_name,omitempty"`
	Keywords     string `json:"keywords,omitempty"`
	GameID       uint64 `json:"game_id,omitempty"`
}

// PlayerInfo is one entry of an A2S_PLAYER reply.
type PlayerInfo struct {
	Index    byte    `json:"index"`
	Name     string  `json:"name"`
	Score    int32   `json:"score"`
	Duration float32 `json:"duration"`
}

// Client asks one server A2S queries over UDP, answering challenges and
// reassembling split replies. It drops replies of another type or split id
// (stale or duplicated ones) and keeps reading until Timeout; what it cannot
// use is a *BadAnswerError. It is not safe for concurrent use.
type Client struct {
	conn    *net.UDPConn
	Timeout time.Duration // per request; 0 means 2 s
	token   uint32        // last challenge received, reused like real clients do
	hasTok  bool
	buf     []byte
}

// Dial makes a client for the server at addr ("host:port").
func Dial(addr string) (*Client, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("a2s: resolve %s: %w", addr, err)
	}
	c, err := net.DialUDP("udp", nil, ua)
	if err != nil {
		return nil, fmt.Errorf("a2s: dial %s: %w", addr, err)
	}
	return &Client{conn: c, buf: make([]byte, 65536)}, nil
}

// Close closes the client's socket.
func (c *Client) Close() error { return c.conn.Close() }

// Info asks A2S_INFO, answering the server's challenges.
func (c *Client) Info() (*Info, error) {
	req := append(append([]byte{}, header...), TypeInfo)
	req = append(req, infoPayload...)
	p, err := c.ask(req, ReplyInfo, true)
	if err != nil {
		return nil, err
	}
	return ParseInfo(p)
}

// Players asks A2S_PLAYER.
func (c *Client) Players() ([]PlayerInfo, error) {
	p, err := c.ask([]byte{0xFF, 0xFF, 0xFF, 0xFF, TypePlayer}, ReplyPlayer, false)
	if err != nil {
		return nil, err
	}
	return ParsePlayers(p)
}

// Rules asks A2S_RULES and returns the rules in reply order.
func (c *Client) Rules() ([][2]string, error) {
	p, err := c.ask([]byte{0xFF, 0xFF, 0xFF, 0xFF, TypeRules}, ReplyRules, false)
	if err != nil {
		return nil, err
	}
	return ParseRules(p)
}

// ask sends req with the challenge appended (the last token, or -1) and
// returns the first reply of type want, reassembled when split. A challenge
// makes it ask again with the new token, at most maxChallenges times; other
// replies (another type, a stale split id) are dropped. The whole call ends
// by Timeout. appendOnly: A2S_INFO carries no challenge field until it has
// one.
func (c *Client) ask(base []byte, want byte, appendOnly bool) ([]byte, error) {
	t := c.Timeout
	if t <= 0 {
		t = 2 * time.Second
	}
	if err := c.conn.SetDeadline(time.Now().Add(t)); err != nil {
		return nil, fmt.Errorf("a2s: %w", err)
	}
	var rx splits
	for challenges := 0; ; challenges++ {
		if challenges == maxChallenges {
			return nil, ErrOnlyChallenges
		}
		req := append([]byte{}, base...)
		switch {
		case c.hasTok:
			req = binary.LittleEndian.AppendUint32(req, c.token)
		case !appendOnly:
			req = binary.LittleEndian.AppendUint32(req, NoChallenge)
		}
		module.Drain(c.conn) // nothing that came before the request answers it
		if _, err := c.conn.Write(req); err != nil {
			return nil, fmt.Errorf("a2s: send: %w", err)
		}
		p, err := c.receive(&rx, want)
		if err != nil || p != nil {
			return p, err
		}
	}
}

// receive reads until a reply of type want (returned) or a challenge (nil,
// the token kept) arrives. At the deadline it says what came instead.
func (c *Client) receive(rx *splits, want byte) ([]byte, error) {
	for {
		n, err := c.conn.Read(c.buf)
		if err != nil {
			if ferr := rx.failure(); ferr != nil && errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, ferr
			}
			return nil, fmt.Errorf("a2s: receive: %w", err)
		}
		d := c.buf[:n]
		if isSplit(d) {
			whole, err := rx.add(d)
			if err != nil {
				return nil, err
			}
			if whole == nil {
				continue // more fragments to come, or dropped
			}
			d = whole
		}
		switch {
		case len(d) < 5 || binary.LittleEndian.Uint32(d) != 0xFFFFFFFF:
			rx.drop(fmt.Sprintf("reply of %d bytes without the FF FF FF FF header", len(d)))
		case d[4] == TypeChallenge && len(d) >= 9:
			c.token, c.hasTok = binary.LittleEndian.Uint32(d[5:9]), true
			return nil, nil
		case d[4] != want:
			rx.drop(fmt.Sprintf("want a %q reply, got %q", want, d[4]))
		default:
			return append([]byte{}, d...), nil
		}
	}
}

// reader decodes little-endian A2S fields.
type reader struct {
	b   []byte
	err error
}

func (r *reader) need(n int) bool {
	if r.err == nil && len(r.b) < n {
		r.err = badAnswer("reply cut short")
	}
	return r.err == nil
}

func (r *reader) u8() byte {
	if !r.need(1) {
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *reader) u16() uint16 {
	if !r.need(2) {
		return 0
	}
	v := binary.LittleEndian.Uint16(r.b)
	r.b = r.b[2:]
	return v
}

func (r *reader) u32() uint32 {
	if !r.need(4) {
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *reader) u64() uint64 {
	if !r.need(8) {
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *reader) str() string {
	if r.err != nil {
		return ""
	}
	for i, c := range r.b {
		if c == 0 {
			s := string(r.b[:i])
			r.b = r.b[i+1:]
			return s
		}
	}
	r.err = badAnswer("string without its NUL")
	return ""
}

func expect(p []byte, typ byte) (*reader, error) {
	if len(p) < 5 || binary.LittleEndian.Uint32(p) != 0xFFFFFFFF || p[4] != typ {
		return nil, badAnswer("want a %q reply", typ)
	}
	return &reader{b: p[5:]}, nil
}

// ParseInfo decodes an A2S_INFO reply datagram.
func ParseInfo(p []byte) (*Info, error) {
	r, err := expect(p, ReplyInfo)
	if err != nil {
		return nil, err
	}
	in := &Info{Protocol: r.u8(), Name: r.str(), Map: r.str(), Folder: r.str(), Game: r.str(), AppID: r.u16()}
	in.Players, in.MaxPlayers, in.Bots = r.u8(), r.u8(), r.u8()
	in.ServerType, in.Environment = string(rune(r.u8())), string(rune(r.u8()))
	in.Password, in.VAC = r.u8() == 1, r.u8() == 1
	in.Version = r.str()
	if r.err == nil && len(r.b) > 0 {
		in.EDF = r.u8()
		if in.EDF&edfPort != 0 {
			in.Port = r.u16()
		}
		if in.EDF&edfSteamID != 0 {
			in.SteamID = r.u64()
		}
		if in.EDF&edfSourceTV != 0 {
			in.SourceTVPort, in.SourceTVName = r.u16(), r.str()
		}
		if in.EDF&edfKeywords != 0 {
			in.Keywords = r.str()
		}
		if in.EDF&edfGameID != 0 {
			in.GameID = r.u64()
		}
	}
	return in, r.err
}

// ParsePlayers decodes an A2S_PLAYER reply payload.
func ParsePlayers(p []byte) ([]PlayerInfo, error) {
	r, err := expect(p, ReplyPlayer)
	if err != nil {
		return nil, err
	}
	n := int(r.u8())
	out := make([]PlayerInfo, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		pi := PlayerInfo{Index: r.u8(), Name: r.str(), Score: int32(r.u32())}
		pi.Duration = math.Float32frombits(r.u32())
		out = append(out, pi)
	}
	return out, r.err
}

// ParseRules decodes an A2S_RULES reply payload.
func ParseRules(p []byte) ([][2]string, error) {
	r, err := expect(p, ReplyRules)
	if err != nil {
		return nil, err
	}
	n := int(r.u16())
	out := make([][2]string, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		out = append(out, [2]string{r.str(), r.str()})
	}
	return out, r.err
}
