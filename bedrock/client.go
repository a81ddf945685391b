package bedrock

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/queryd/queryd/module"
)

// Pong is a decoded unconnected pong.
type Pong struct {
	Time       uint64 `json:"-"`           // the ping's time, echoed
	ServerGUID uint64 `json:"server_guid"` // from the header
	Status     Status `json:"status"`
	Raw        string `json:"raw"` // the status string as received
}

// Status is the pong's status string, field by field. Numbers a server
// leaves empty are 0.
type Status struct {
	Edition        string `json:"edition"`
	MOTD           string `json:"motd"`
	Protocol       int    `json:"protocol"`
	Version        string `json:"version"`
	Players        int    `json:"players"`
	MaxPlayers     int    `json:"max_players"`
	ServerID       string `json:"server_id"`
	SubMOTD        string `json:"sub_motd"`
	GameMode       string `json:"game_mode"`
	GameModeNumber int    `json:"game_mode_number"`
	IPv4Port       int    `json:"ipv4_port"`
	IPv6Port       int    `json:"ipv6_port"`
}

// minFields is how many status fields a client needs (gamedig's rule):
// edition to max players; the others are optional.
const minFields = 6

// ParsePong decodes a pong strictly: id 1C, the magic, a status length
// equal to the bytes that follow, UTF-8 text, and a status string ParseStatus
// accepts.
func ParsePong(p []byte) (*Pong, error) {
	if len(p) < PongHeaderLen {
		return nil, badAnswer("pong of %d bytes is too short (at least %d)", len(p), PongHeaderLen)
	}
	if p[0] != IDPong {
		return nil, badAnswer("want message id 0x1c, got %#x", p[0])
	}
	if [16]byte(p[pongMagic:pongMagic+16]) != Magic {
		return nil, badAnswer("no RakNet magic at offset 17")
	}
	n := int(binary.BigEndian.Uint16(p[pongLen:]))
	if rest := len(p) - PongHeaderLen; rest != n {
		return nil, badAnswer("status length %d, but %d bytes follow", n, rest)
	}
	raw := p[PongHeaderLen:]
	if !utf8.Valid(raw) {
		return nil, badAnswer("status string is not UTF-8")
	}
	st, err := ParseStatus(string(raw))
	if err != nil {
		return nil, err
	}
	return &Pong{
		Time:       binary.BigEndian.Uint64(p[pongTime:]),
		ServerGUID: binary.BigEndian.Uint64(p[pongGUID:]),
		Status:     st,
		Raw:        string(raw),
	}, nil
}

// ParseStatus decodes a status string: fields separated by ';' (a trailing
// ';' is allowed), at least edition to max players, the numbers in decimal
// (an absent or empty optional number is 0).
func ParseStatus(s string) (Status, error) {
	f := strings.Split(strings.TrimSuffix(s, ";"), ";")
	if len(f) < minFields {
		return Status{}, badAnswer("status string has %d fields, want at least %d: %q", len(f), minFields, s)
	}
	for len(f) < 12 {
		f = append(f, "")
	}
	var st Status
	var err error
	num := func(i int, name string, required bool) int {
		if err != nil || (!required && f[i] == "") {
			return 0
		}
		n, e := strconv.Atoi(f[i])
		if e != nil {
			err = badAnswer("%s %q is not a number", name, f[i])
		}
		return n
	}
	st = Status{
		Edition: f[0], MOTD: f[1], Protocol: num(2, "protocol", true), Version: f[3],
		Players: num(4, "players", true), MaxPlayers: num(5, "max players", true),
		ServerID: f[6], SubMOTD: f[7], GameMode: f[8], GameModeNumber: num(9, "game mode number", false),
		IPv4Port: num(10, "IPv4 port", false), IPv6Port: num(11, "IPv6 port", false),
	}
	return st, err
}

// Client pings one server over UDP. It is not safe for concurrent use.
type Client struct {
	conn    *net.UDPConn
	Timeout time.Duration // per ping; 0 means 2 s
	GUID    uint64        // the client GUID sent (random)
	last    uint64        // the last ping's time
	buf     []byte
}

// Dial makes a client for the server at addr ("host:port").
func Dial(addr string) (*Client, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("bedrock: resolve %s: %w", addr, err)
	}
	c, err := net.DialUDP("udp", nil, ua)
	if err != nil {
		return nil, fmt.Errorf("bedrock: dial %s: %w", addr, err)
	}
	var g [8]byte
	rand.Read(g[:])
	return &Client{conn: c, GUID: binary.BigEndian.Uint64(g[:]), buf: make([]byte, 65536)}, nil
}

// Close closes the client's socket.
func (c *Client) Close() error { return c.conn.Close() }

// Ping sends an unconnected ping with the time in milliseconds (always
// later than this client's previous ping) and returns the first pong that
// echoes it. Datagrams that are not a pong, and pongs to another ping (a
// late one), are dropped until Timeout; a pong to this ping that does not
// parse is a BadAnswerError.
func (c *Client) Ping() (*Pong, error) {
	t := max(uint64(time.Now().UnixMilli()), c.last+1)
	c.last = t
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	if err := c.conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, fmt.Errorf("bedrock: %w", err)
	}
	module.Drain(c.conn) // nothing that came before the ping answers it
	if _, err := c.conn.Write(AppendPing(nil, t, c.GUID)); err != nil {
		return nil, fmt.Errorf("bedrock: send: %w", err)
	}
	dropped, reason := 0, ""
	for {
		n, err := c.conn.Read(c.buf)
		if err != nil {
			if dropped > 0 && errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, badAnswer("%s (%d replies dropped)", reason, dropped)
			}
			return nil, fmt.Errorf("bedrock: receive: %w", err)
		}
		p := c.buf[:n]
		switch {
		case n < pongTime+8 || p[0] != IDPong:
			reason = fmt.Sprintf("not a pong: %d bytes starting % x", n, p[:min(n, 4)])
		case binary.BigEndian.Uint64(p[pongTime:]) != t:
			reason = fmt.Sprintf("pong echoes the time %d, not this ping's %d", binary.BigEndian.Uint64(p[pongTime:]), t)
		default:
			return ParsePong(p)
		}
		dropped++
	}
}
