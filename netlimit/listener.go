package netlimit

import (
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Listener wraps a net.Listener for a server's accept loop: Accept retries
// Retryable errors with Backoff instead of returning them, and at most Max
// accepted connections are open at once (a connection's Close frees its
// slot). When all slots are taken, a new connection is accepted and handed
// to Reject (which should tell the peer and close it) when Reject is set;
// otherwise Accept waits for a free slot, leaving new connections in the
// kernel's backlog, where they hold no descriptor of ours.
type Listener struct {
	net.Listener
	// Max is how many accepted connections may be open at once; 0: no cap.
	Max int
	// Reject, when set, receives each connection over Max (and must close
	// it) instead of Accept waiting for a slot.
	Reject func(net.Conn)
	// Logger reports a failing accept at most once a second; nil: slog.Default.
	Logger *slog.Logger

	once     sync.Once
	slots    chan struct{}
	closed   chan struct{}
	closeOne sync.Once
	open     atomic.Int64
	rejected atomic.Uint64
	retried  atomic.Uint64
	lastLog  time.Time
}

func (l *Listener) init() {
	l.once.Do(func() {
		if l.Max > 0 {
			l.slots = make(chan struct{}, l.Max)
		}
		l.closed = make(chan struct{})
		if l.Logger == nil {
			l.Logger = slog.Default()
		}
	})
}

// Accept returns the next connection, waiting out resource shortages; it
// returns an error only when the listener is closed or broken for good.
func (l *Listener) Accept() (net.Conn, error) {
	l.init()
	var b Backoff
	for {
		if l.slots != nil && l.Reject == nil {
			select {
			case l.slots <- struct{}{}:
			case <-l.closed:
				return nil, net.ErrClosed
			}
		}
		c, err := l.Listener.Accept()
		if err != nil {
			l.release()
			if !Retryable(err) {
				return nil, err
			}
			l.retried.Add(1)
			l.logRetry(err)
			select {
			case <-time.After(b.Next()):
			case <-l.closed:
				return nil, net.ErrClosed
			}
			continue
		}
		b.Reset()
		if l.slots != nil && l.Reject != nil {
			select {
			case l.slots <- struct{}{}:
			default:
				l.rejected.Add(1)
				l.Reject(c)
				continue
			}
		}
		l.open.Add(1)
		return &conn{Conn: c, l: l}, nil
	}
}

// release frees a slot taken before an Accept that failed.
func (l *Listener) release() {
	if l.slots != nil && l.Reject == nil {
		<-l.slots
	}
}

func (l *Listener) logRetry(err error) {
	if now := time.Now(); now.Sub(l.lastLog) >= time.Second {
		l.lastLog = now
		l.Logger.Warn("accept failed; retrying", "addr", l.Listener.Addr().String(), "err", err, "retries", l.retried.Load())
	}
}

// Close closes the listener; an Accept waiting for a slot or a retry returns.
func (l *Listener) Close() error {
	l.init()
	l.closeOne.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// Open returns how many accepted connections are open.
func (l *Listener) Open() int { return int(l.open.Load()) }

// Rejected returns how many connections were handed to Reject.
func (l *Listener) Rejected() uint64 { return l.rejected.Load() }

// Retried returns how many accepts failed with a Retryable error.
func (l *Listener) Retried() uint64 { return l.retried.Load() }

// conn frees its listener slot once, on the first Close, and follows the
// server's reading of its request heads (a Shedder's choice).
type conn struct {
	net.Conn
	l    *Listener
	once sync.Once
	head requestHead
}

// Read reads from the connection, noting what the server has read.
func (c *conn) Read(p []byte) (int, error) {
	c.head.reading()
	n, err := c.Conn.Read(p)
	c.head.read(p[:n])
	return n, err
}

// Close closes the connection and frees its slot.
func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.open.Add(-1)
		if c.l.slots != nil {
			<-c.l.slots
		}
	})
	return err
}

// Unwrap returns the accepted connection (e.g. a *net.UnixConn).
func (c *conn) Unwrap() net.Conn { return c.Conn }

var (
	_ net.Listener = (*Listener)(nil)
	_ net.Conn     = (*conn)(nil)
)
