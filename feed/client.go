package feed

import (
	"bufio"
	"bytes"
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

// ErrNotSent wraps the error of a Replace or Patch that did not get
// queryd's answer (queryd down, restarting, the connection lost): the
// change is kept and sent on a later call, once connected again.
var ErrNotSent = errors.New("feed: not answered yet; kept, to be sent on reconnect")

// Rejection is a change that was kept (ErrNotSent) and that queryd
// rejected when a later call sent it: it is dropped.
type Rejection struct {
	Op     string          // "replace" or "patch"
	Change json.RawMessage // the document or merge patch sent
	Err    *ReplyError     // queryd's answer
}

func (r *Rejection) Error() string { return "queryd rejected a kept " + r.Op + ": " + r.Err.Msg }

// Unwrap returns the *ReplyError.
func (r *Rejection) Unwrap() error { return r.Err }

// Client is a feed connection for a game server written in Go. It is safe
// for concurrent use; messages are sent and answered one at a time, each
// call waiting for its answer (up to Timeout).
//
// It keeps the last document queryd accepted from it (its last accepted
// Replace with the Patches accepted since merged in) and the changes queryd
// has not answered yet. A rejected Replace or Patch returns a *ReplyError
// and is dropped: it never reaches that document. When the connection is
// lost (queryd restarted), the next call connects again (with backoff:
// 100 ms doubling to 5 s between tries), sends the accepted document
// (replace) first, then the kept changes in order, then its own message;
// until then, Replace and Patch keep their change and return an error
// wrapping ErrNotSent. Do and Send are not tracked: what they send is not
// part of that document.
type Client struct {
	Timeout time.Duration // per message round trip; 0 means 5 s
	// MaxQueue is how many patches are kept while queryd does not answer;
	// past it they are folded into one replace of the newest state. 0 means 64.
	MaxQueue int
	// OnRejected, when set, is told of a kept change queryd rejected when a
	// later call sent it; when nil, that call's error carries it
	// (errors.As finds the *Rejection and its *ReplyError).
	OnRejected func(*Rejection)

	mu       sync.Mutex
	path     string
	conn     net.Conn
	r        *bufio.Reader
	closed   bool
	accepted map[string]any // nil before queryd accepted a document
	pending  []*change      // not answered yet, oldest first
	backoff  time.Duration
	retryAt  time.Time
	dialErr  error
}

// change is one Replace or Patch not answered yet.
type change struct {
	replace bool
	folded  bool           // the kept patches folded into one replace
	doc     map[string]any // the document or the merge patch (nulls kept)
	raw     json.RawMessage
	version uint64 // queryd's answer to it
	err     error
}

const (
	backoffMin = 100 * time.Millisecond
	backoffMax = 5 * time.Second
)

// Dial connects to the feed socket at path.
func Dial(path string) (*Client, error) {
	c := &Client{path: path}
	if err := c.dial(); err != nil {
		return nil, err
	}
	return c, nil
}

// NewClient returns a Client for the feed socket at path that connects on
// its first call: a game may start before queryd, and its Replace and
// Patch are kept until queryd answers.
func NewClient(path string) *Client { return &Client{path: path} }

func (c *Client) dial() error {
	conn, err := net.DialTimeout("unix", c.path, 5*time.Second)
	if err != nil {
		return fmt.Errorf("feed dial %s: %w", c.path, err)
	}
	c.conn, c.r = conn, bufio.NewReaderSize(conn, 64<<10)
	return nil
}

// Close closes the connection; later calls fail.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

// Accepted returns the last document queryd accepted from this client
// (nil before it accepted one).
func (c *Client) Accepted() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.accepted == nil {
		return nil
	}
	b, _ := json.Marshal(c.accepted)
	return b
}

// Replace sends the whole state document (any value that marshals to a JSON
// object) and returns the new state version.
func (c *Client) Replace(doc any) (uint64, error) {
	return c.change(true, doc)
}

// Patch sends an RFC 7386 merge patch and returns the new state version.
// A null member removes a field, e.g. {"players": {"3": null}}.
func (c *Client) Patch(patch any) (uint64, error) {
	return c.change(false, patch)
}

// Ping keeps the feed from going stale and returns the current version.
func (c *Client) Ping() (uint64, error) {
	rep, err := c.Do(map[string]any{"op": "ping"})
	return rep.Version, err
}

// Wake asks queryd to wake the server's game server if it is asleep
// ([sleep]: {"op":"wake"}; the game's matchmaking sends it before it sends
// players). It returns once the wake has begun, not once the game server
// is up; the error says why no wake may begin (the server does not sleep,
// or its hour's wakes are spent).
func (c *Client) Wake() (uint64, error) {
	rep, err := c.Do(map[string]any{"op": "wake"})
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

// Send sends one raw message line (without the newline) and returns its
// reply, after the kept changes (see Client). A connection that fails is
// dropped: the next call connects again.
func (c *Client) Send(line []byte) (Reply, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.connect(); err != nil {
		return Reply{}, err
	}
	lost, errs := c.flush(nil)
	if lost != nil {
		return Reply{}, join(errs, lost)
	}
	rep, err := c.roundTrip(line)
	if err != nil {
		return Reply{}, join(errs, err)
	}
	return rep, join(errs, replyErr(rep))
}

// change keeps a Replace or Patch, sends what is kept and returns the
// answer to this one.
func (c *Client) change(replace bool, v any) (uint64, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return 0, fmt.Errorf("feed: encoding the state: %w", err)
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil || doc == nil {
		return 0, fmt.Errorf("feed: the state must marshal to a JSON object, got %.40s", raw)
	}
	ch := &change{replace: replace, doc: doc, raw: raw}
	c.mu.Lock()
	defer c.mu.Unlock()
	if replace {
		c.pending = c.pending[:0] // newest state wins
	}
	c.pending = append(c.pending, ch)
	c.fold()
	var errs []error
	for attempt := 0; ; attempt++ {
		fresh, err := c.connect()
		if err != nil {
			return 0, join(errs, fmt.Errorf("%w: %w", ErrNotSent, err))
		}
		lost, kept := c.flush(ch)
		errs = append(errs, kept...)
		if lost == nil {
			return ch.version, join(errs, ch.err)
		}
		if fresh || attempt > 0 {
			return 0, join(errs, fmt.Errorf("%w: %w", ErrNotSent, lost))
		}
		// An old connection, which a queryd restart ends: dial again at once.
	}
}

// connect (mu held) dials when there is no connection, at most once per
// backoff delay, and sends the accepted document first. It reports whether
// the connection is new.
func (c *Client) connect() (fresh bool, err error) {
	if c.closed {
		return false, errors.New("feed: the client is closed")
	}
	if c.conn != nil {
		return false, nil
	}
	if time.Now().Before(c.retryAt) {
		return false, c.dialErr
	}
	if err := c.dial(); err != nil {
		c.backoff = min(max(c.backoff*2, backoffMin), backoffMax)
		c.retryAt, c.dialErr = time.Now().Add(c.backoff), err
		return false, err
	}
	c.backoff, c.retryAt = 0, time.Time{}
	if c.accepted != nil { // queryd may have restarted: what it accepted comes first
		b, _ := json.Marshal(map[string]any{"op": "replace", "state": c.accepted})
		rep, err := c.roundTrip(b)
		if err != nil {
			return true, err
		}
		if !rep.OK { // even what it accepted before: a queryd with other rules
			c.accepted = nil
		}
	}
	return true, nil
}

// drop (mu held) closes the connection; the next call dials again.
func (c *Client) drop() {
	if c.conn != nil {
		c.conn.Close()
		c.conn, c.r = nil, nil
	}
}

// flush (mu held) sends the kept changes in order. own is the calling
// Replace or Patch: its answer goes in own.version and own.err; the others'
// rejections go to OnRejected or are returned. lost is a connection error
// (the connection is dropped; the change it was sending stays kept).
func (c *Client) flush(own *change) (lost error, errs []error) {
	for len(c.pending) > 0 {
		ch := c.pending[0]
		op := "patch"
		if ch.replace {
			op = "replace"
		}
		b, _ := json.Marshal(map[string]any{"op": op, "state": json.RawMessage(ch.raw)})
		rep, err := c.roundTrip(b)
		if err != nil {
			return err, errs
		}
		c.pending = c.pending[1:]
		ch.version = rep.Version
		if rep.OK {
			c.apply(ch)
			continue
		}
		ch.err = replyErr(rep)
		if ch == own {
			continue
		}
		var re *ReplyError
		if errors.As(ch.err, &re) {
			r := &Rejection{Op: op, Change: ch.raw, Err: re}
			if c.OnRejected != nil {
				c.OnRejected(r)
			} else {
				errs = append(errs, r)
			}
		}
	}
	return nil, errs
}

// apply (mu held) merges an accepted change into the accepted document.
func (c *Client) apply(ch *change) {
	if ch.replace {
		c.accepted = mergePatch(nil, ch.doc)
		return
	}
	c.accepted = mergePatch(c.accepted, ch.doc)
}

// fold (mu held) turns the kept patches, past MaxQueue, into one replace of
// the newest state; a Replace the game made itself stays ahead of it.
func (c *Client) fold() {
	limit := c.MaxQueue
	if limit <= 0 {
		limit = 64
	}
	n := 0
	for _, ch := range c.pending {
		if !ch.replace {
			n++
		}
	}
	if n <= limit {
		return
	}
	doc := mergePatch(nil, c.accepted)
	for _, ch := range c.pending {
		if ch.replace {
			doc = mergePatch(nil, ch.doc)
		} else {
			doc = mergePatch(doc, ch.doc)
		}
	}
	raw, _ := json.Marshal(doc)
	var kept []*change
	if first := c.pending[0]; first.replace && !first.folded {
		kept = append(kept, first)
	}
	c.pending = append(kept, &change{replace: true, folded: true, doc: doc, raw: raw})
}

// roundTrip (mu held) sends one line on the connection and reads its reply;
// an error means the connection is unusable (it is dropped).
func (c *Client) roundTrip(line []byte) (Reply, error) {
	t := c.Timeout
	if t <= 0 {
		t = 5 * time.Second
	}
	c.conn.SetDeadline(time.Now().Add(t))
	if _, err := c.conn.Write(append(line[:len(line):len(line)], '\n')); err != nil {
		c.drop()
		return Reply{}, fmt.Errorf("feed: sending: %w", err)
	}
	resp, err := c.r.ReadBytes('\n')
	if err != nil {
		c.drop()
		return Reply{}, fmt.Errorf("feed: reading the reply: %w", err)
	}
	var rep Reply
	if err := json.Unmarshal(resp, &rep); err != nil {
		c.drop()
		return Reply{}, fmt.Errorf("feed: bad reply %q: %w", resp, err)
	}
	return rep, nil
}

// join is err with the errors before it (err alone when there are none).
func join(errs []error, err error) error {
	if len(errs) == 0 {
		return err
	}
	return errors.Join(append(errs, err)...)
}

// replyErr is the error of a rejected reply (nil for an accepted one).
func replyErr(rep Reply) error {
	if rep.OK {
		return nil
	}
	if rep.Error == "" {
		return errors.New("feed: rejected without a reason")
	}
	return &ReplyError{Msg: rep.Error}
}

// mergePatch applies an RFC 7386 merge patch to a copy of target and
// returns it (patch's nulls remove; target is not changed).
func mergePatch(target, patch map[string]any) map[string]any {
	out := make(map[string]any, len(target)+len(patch))
	for k, v := range target {
		out[k] = v
	}
	for k, v := range patch {
		switch v := v.(type) {
		case nil:
			delete(out, k)
		case map[string]any:
			sub, _ := out[k].(map[string]any)
			out[k] = mergePatch(sub, v)
		default:
			out[k] = v
		}
	}
	return out
}
