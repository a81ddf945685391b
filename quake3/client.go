package quake3

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/queryd/queryd/module"
)

// Info is a parsed info string: its keys and values in order.
type Info struct {
	Keys   []string
	Values map[string]string
}

// Get returns the value of key ("" when absent).
func (i *Info) Get(key string) string { return i.Values[key] }

// PlayerLine is one player of a statusResponse.
type PlayerLine struct {
	Score int    `json:"score"`
	Ping  int    `json:"ping"`
	Name  string `json:"name"`
}

// Status is a parsed statusResponse.
type Status struct {
	Info    *Info
	Players []PlayerLine
}

var (
	errNoReply  = &BadAnswerError{What: "not the expected reply"}
	errBadInfo  = &BadAnswerError{What: "info string does not start with \\ or has a key without a value"}
	errBadLine  = &BadAnswerError{What: "bad player line"}
	errEchoMiss = &BadAnswerError{What: "reply does not echo the challenge"}
)

// ParseInfoString parses `\key\value\key\value…`. An empty string is an empty Info.
func ParseInfoString(s string) (*Info, error) {
	inf := &Info{Values: map[string]string{}}
	if s == "" {
		return inf, nil
	}
	if s[0] != '\\' {
		return nil, errBadInfo
	}
	parts := bytes.Split([]byte(s[1:]), []byte{'\\'})
	if len(parts)%2 != 0 {
		return nil, errBadInfo
	}
	for i := 0; i < len(parts); i += 2 {
		k := string(parts[i])
		if _, dup := inf.Values[k]; !dup {
			inf.Keys = append(inf.Keys, k)
		}
		inf.Values[k] = string(parts[i+1])
	}
	return inf, nil
}

// ParseInfoResponse parses an infoResponse datagram.
func ParseInfoResponse(p []byte) (*Info, error) {
	if !bytes.HasPrefix(p, infoHeader) {
		return nil, errNoReply
	}
	return ParseInfoString(string(p[len(infoHeader):]))
}

// ParseStatusResponse parses a statusResponse datagram.
func ParseStatusResponse(p []byte) (*Status, error) {
	if !bytes.HasPrefix(p, statusHeader) {
		return nil, errNoReply
	}
	body := p[len(statusHeader):]
	infoPart, rest, _ := bytes.Cut(body, []byte{'\n'})
	inf, err := ParseInfoString(string(infoPart))
	if err != nil {
		return nil, err
	}
	st := &Status{Info: inf, Players: []PlayerLine{}}
	for _, line := range bytes.Split(rest, []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		pl, err := parsePlayer(line)
		if err != nil {
			return nil, err
		}
		st.Players = append(st.Players, pl)
	}
	return st, nil
}

// parsePlayer parses `score ping "name"`.
func parsePlayer(line []byte) (PlayerLine, error) {
	f := bytes.SplitN(line, []byte{' '}, 3)
	if len(f) != 3 {
		return PlayerLine{}, fmt.Errorf("%w: %q", errBadLine, line)
	}
	score, err1 := strconv.Atoi(string(f[0]))
	ping, err2 := strconv.Atoi(string(f[1]))
	name := f[2]
	if err1 != nil || err2 != nil || len(name) < 2 || name[0] != '"' || name[len(name)-1] != '"' {
		return PlayerLine{}, fmt.Errorf("%w: %q", errBadLine, line)
	}
	return PlayerLine{Score: score, Ping: ping, Name: string(name[1 : len(name)-1])}, nil
}

// Client asks one server getinfo and getstatus over UDP. It is not safe for
// concurrent use.
type Client struct {
	conn    *net.UDPConn
	Timeout time.Duration // per request; 0 means 2 s
	buf     []byte
}

// Dial makes a client for the server at addr ("host:port").
func Dial(addr string) (*Client, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("quake3: resolve %s: %w", addr, err)
	}
	c, err := net.DialUDP("udp", nil, ua)
	if err != nil {
		return nil, fmt.Errorf("quake3: dial %s: %w", addr, err)
	}
	return &Client{conn: c, buf: make([]byte, 65536)}, nil
}

// Close closes the client's socket.
func (c *Client) Close() error { return c.conn.Close() }

// Info sends "getinfo <random challenge>" and returns the first
// infoResponse that echoes the challenge.
func (c *Client) Info() (*Info, error) {
	ch := newChallenge()
	var inf *Info
	err := c.ask("getinfo "+ch, infoHeader, func(p []byte) (err error) {
		if inf, err = ParseInfoResponse(p); err == nil && inf.Get("challenge") != ch {
			err = errEchoMiss
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return inf, nil
}

// Status sends "getstatus <random challenge>" and returns the first
// statusResponse that echoes the challenge.
func (c *Client) Status() (*Status, error) {
	ch := newChallenge()
	var st *Status
	err := c.ask("getstatus "+ch, statusHeader, func(p []byte) (err error) {
		if st, err = ParseStatusResponse(p); err == nil && st.Info.Get("challenge") != ch {
			err = errEchoMiss
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// ask sends one command and hands each reply starting with want to accept
// until it takes one (nil). Replies of other kinds, and those accept
// refuses (one that does not echo the challenge: a stale or forged one;
// one that cannot be read) are dropped. It ends by Timeout: with a
// BadAnswerError saying why the last was dropped when only dropped
// replies came.
func (c *Client) ask(cmd string, want []byte, accept func(p []byte) error) error {
	t := c.Timeout
	if t <= 0 {
		t = 2 * time.Second
	}
	if err := c.conn.SetDeadline(time.Now().Add(t)); err != nil {
		return fmt.Errorf("quake3: %w", err)
	}
	module.Drain(c.conn) // nothing that came before the request answers it
	if _, err := c.conn.Write(append(append([]byte{}, header...), cmd...)); err != nil {
		return fmt.Errorf("quake3: send: %w", err)
	}
	dropped, reason := 0, ""
	for {
		n, err := c.conn.Read(c.buf)
		if err != nil {
			if dropped > 0 && errors.Is(err, os.ErrDeadlineExceeded) {
				return badAnswer("%s (%d replies dropped)", reason, dropped)
			}
			return fmt.Errorf("quake3: receive: %w", err)
		}
		p := c.buf[:n]
		if !bytes.HasPrefix(p, want) {
			dropped, reason = dropped+1, fmt.Sprintf("want a reply starting %q", want)
			continue
		}
		// A reply that does not echo the challenge, or cannot be read, is
		// dropped: it may be forged or junk, and the real one may follow.
		if err := accept(p); err != nil {
			dropped, reason = dropped+1, strings.TrimPrefix(err.Error(), "quake3: ")
			continue
		}
		return nil
	}
}

// newChallenge makes a random challenge of 12 letters and digits.
func newChallenge() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 12)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
