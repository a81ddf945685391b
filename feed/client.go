package feed

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// ReplyError is a message queryd rejected ({"ok":false}); nothing changed.
type ReplyError struct{ Msg string }

func (e *ReplyError) Error() string { return "queryd rejected the message: " + e.Msg }

// Client is a feed connection for a game server written in Go. It is safe
// for concurrent use; messages are sent and answered one at a time.
type Client struct {
	mu      sync.Mutex
	conn    net.Conn
	r       *bufio.Reader
	Timeout time.Duration // per message round trip; 0 means 5 s
}

// Dial connects to the feed socket at path.
func Dial(path string) (*Client, error) {
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("feed dial %s: %w", path, err)
	}
	return &Client{conn: c, r: bufio.NewReaderSize(c, 64<<10)}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Replace sends the whole state document (any value that marshals to a JSON
// object) and returns the new state version.
func (c *Client) Replace(doc any) (uint64, error) {
	rep, err := c.Do(map[string]any{"op": "replace", "state": doc})
	return rep.Version, err
}

// Patch sends an RFC 7386 merge patch and returns the new state version.
// A null member removes a field, e.g. {"players": {"3": null}}.
func (c *Client) Patch(patch any) (uint64, error) {
	rep, err := c.Do(map[string]any{"op": "patch", "state": patch})
	return rep.Version, err
}

// Ping keeps the feed from going stale and returns the current version.
func (c *Client) Ping() (uint64, error) {
	rep, err := c.Do(map[string]any{"op": "ping"})
	return rep.Version, err
}

// Get returns the current version and the effective state document.
func (c *Client) Get() (uint64, json.RawMessage, error) {
	rep, err := c.Do(map[string]any{"op": "get"})
	return rep.Version, rep.State, err
}

// Do sends one message (marshalled to JSON) and returns its reply. A
// rejected message returns the reply and a *ReplyError.
func (c *Client) Do(msg any) (Reply, error) {
	b, err := json.Marshal(msg)
	if err != nil {
		return Reply{}, fmt.Errorf("feed: encoding the message: %w", err)
	}
	return c.Send(b)
}

// Send sends one raw message line (without the newline) and returns its reply.
func (c *Client) Send(line []byte) (Reply, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.Timeout
	if t <= 0 {
		t = 5 * time.Second
	}
	c.conn.SetDeadline(time.Now().Add(t))
	if _, err := c.conn.Write(append(line[:len(line):len(line)], '\n')); err != nil {
		return Reply{}, fmt.Errorf("feed: sending: %w", err)
	}
	resp, err := c.r.ReadBytes('\n')
	if err != nil {
		return Reply{}, fmt.Errorf("feed: reading the reply: %w", err)
	}
	var rep Reply
	if err := json.Unmarshal(resp, &rep); err != nil {
		return Reply{}, fmt.Errorf("feed: bad reply %q: %w", resp, err)
	}
	if !rep.OK {
		if rep.Error == "" {
			return rep, errors.New("feed: rejected without a reason")
		}
		return rep, &ReplyError{Msg: rep.Error}
	}
	return rep, nil
}
