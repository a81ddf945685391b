package feed

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/user"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/queryd/queryd/internal/activity"
	"github.com/queryd/queryd/netlimit"
	"github.com/queryd/queryd/state"
)

// Config configures the feed socket.
type Config struct {
	Socket     string        // path of the Unix stream socket
	Mode       fs.FileMode   // permissions of the socket file (0660 by default)
	Group      string        // group name or id to own the socket, "" to keep the default
	StaleAfter time.Duration // silence after this much quiet once the feed has spoken; 0 disables
	// MaxConns caps the connections open at once; one more gets an error
	// line and is closed. 0: DefaultMaxConns.
	MaxConns int
	// MaxBuffered caps the bytes that the unfinished lines of all
	// connections hold beyond each connection's 4 KiB read buffer; a
	// connection whose line would pass it gets an error line and is closed.
	// 0: DefaultMaxBuffered.
	MaxBuffered int64
	// LineTimeout is how long a line may take from its first byte to its
	// newline, and a reply to be taken by the peer; past it the connection
	// gets an error line and is closed. A connection idle between lines is
	// kept. 0: DefaultLineTimeout.
	LineTimeout time.Duration
	// Peer, when set, answers {"op":"peer","port":N,"addr":"IP"} (relay
	// mode; addr is optional, invalid when absent) with the real client and
	// the session's address as the game server sees it, both "IP:PORT".
	Peer func(port int, addr netip.Addr) (peer, local string, err error)
	// Wake, when set, carries out {"op":"wake"} ([sleep]: start the game
	// server if it is asleep); nil: the server does not sleep, and wake is
	// an error. Its error is the reply's.
	Wake func() error
	// Rest is the server's rest ([sleep]): while it rests the feed is not
	// stale, and once awake its quiet counts from the wake (nil: never).
	Rest   *activity.Rest
	Logger *slog.Logger
}

// Server accepts feed connections and applies their messages to a Store.
type Server struct {
	cfg      Config
	store    *state.Store
	log      *slog.Logger
	ln       *netlimit.Listener
	budget   budget
	drops    drops
	lastWarn atomic.Int64   // unix nanoseconds of the last warning about a dropped connection
	active   activity.Clock // the feed's activity (Activity)
	fedAt    atomic.Int64   // unix nanoseconds of the first accepted state; 0: never
	stale    atomic.Bool    // last reported staleness, for logging the change once
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	wg       sync.WaitGroup
	closed   atomic.Bool
}

// Listen creates the socket file and returns a server ready to Serve. An
// existing socket file at the path is replaced unless a live server answers
// on it; any other kind of file there is an error and is left untouched.
// The socket file is never open to more than its owner until it has its
// group and mode.
func Listen(cfg Config, store *state.Store) (*Server, error) {
	cfg = withDefaults(cfg)
	gid, err := lookupGroup(cfg.Group)
	if err != nil {
		return nil, err
	}
	if err := clearSocketPath(cfg.Socket); err != nil {
		return nil, err
	}
	ln, err := bindPrivate(cfg.Socket, cfg.Mode.Perm()&0o700)
	if err != nil {
		return nil, fmt.Errorf("feed socket %s: %w", cfg.Socket, err)
	}
	if err := setOwnership(cfg.Socket, cfg.Mode, gid); err != nil {
		ln.Close()
		os.Remove(cfg.Socket)
		return nil, err
	}
	s := &Server{cfg: cfg, store: store, log: cfg.Logger, conns: map[net.Conn]struct{}{}}
	s.budget.max = cfg.MaxBuffered
	s.ln = &netlimit.Listener{Listener: ln, Max: cfg.MaxConns, Reject: s.reject, Logger: cfg.Logger}
	return s, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Mode == 0 {
		cfg.Mode = 0o660
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.MaxBuffered <= 0 {
		cfg.MaxBuffered = DefaultMaxBuffered
	}
	if cfg.LineTimeout <= 0 {
		cfg.LineTimeout = DefaultLineTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg
}

// ErrServed is CheckSocketPath's error when a server answers on the path.
var ErrServed = errors.New("another process is serving it (is queryd already running?)")

// CheckSocketPath says whether New could listen at path now, changing
// nothing: nil when nothing is there or only a stale socket (no server
// answers on it), which New replaces; an error when another kind of file is
// in the way, or ErrServed (wrapped) when a server answers on it.
func CheckSocketPath(path string) error {
	_, err := checkSocketPath(path)
	return err
}

// checkSocketPath is CheckSocketPath; stale reports a socket file New must
// remove first.
func checkSocketPath(path string) (stale bool, err error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("feed socket %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return false, fmt.Errorf("feed socket %s: a %s is in the way; not removing it (choose another [feed] socket path or remove it yourself)", path, kindOf(fi))
	}
	if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
		c.Close()
		return false, fmt.Errorf("feed socket %s: %w", path, ErrServed)
	}
	return true, nil
}

func clearSocketPath(path string) error {
	stale, err := checkSocketPath(path)
	if err != nil || !stale {
		return err
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("feed socket %s: removing the stale socket: %w", path, err)
	}
	return nil
}

func kindOf(fi fs.FileInfo) string {
	switch {
	case fi.IsDir():
		return "directory"
	case fi.Mode().Type() == fs.ModeSymlink:
		return "symbolic link"
	case fi.Mode().IsRegular():
		return "regular file"
	}
	return "file (" + fi.Mode().Type().String() + ")"
}

// lookupGroup returns the id of a group name or number; -1 for "".
func lookupGroup(group string) (int, error) {
	if group == "" {
		return -1, nil
	}
	if gid, err := strconv.Atoi(group); err == nil {
		return gid, nil
	}
	g, err := user.LookupGroup(group)
	if err != nil {
		return 0, fmt.Errorf("feed socket group %q: %w", group, err)
	}
	gid, err := strconv.Atoi(g.Gid)
	if err != nil {
		return 0, fmt.Errorf("feed socket group %q: id %q is not a number", group, g.Gid)
	}
	return gid, nil
}

// setOwnership gives the socket file its group (gid -1: keep) and then its mode.
func setOwnership(path string, mode fs.FileMode, gid int) error {
	if gid >= 0 {
		if err := os.Chown(path, -1, gid); err != nil {
			return fmt.Errorf("feed socket group %d: %w", gid, err)
		}
	}
	if err := os.Chmod(path, mode); err != nil {
		return fmt.Errorf("feed socket mode %o: %w", mode, err)
	}
	return nil
}

// Path returns the socket's path.
func (s *Server) Path() string { return s.cfg.Socket }

// Serve accepts connections until Close. Each connection is served on its
// own goroutine. Running out of descriptors or memory pauses accepting (see
// netlimit.Listener); Serve returns an error only when the listener breaks
// for good, and nil after Close.
func (s *Server) Serve() error {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if s.closed.Load() {
				return nil
			}
			return fmt.Errorf("feed accept: %w", err)
		}
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// Close stops accepting, closes every connection, removes the socket file
// and waits for the connections' goroutines.
func (s *Server) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	err := s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	if rerr := os.Remove(s.cfg.Socket); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
		err = rerr
	}
	return err
}

// Stats returns what the feed holds and has refused.
func (s *Server) Stats() Stats {
	return Stats{
		Open:       s.ln.Open(),
		Buffered:   s.budget.held.Load(),
		Dropped:    s.drops.snapshot(),
		AcceptWait: s.ln.Retried(),
	}
}

// Stale reports whether the feed has had activity (see Activity) and then
// none for longer than StaleAfter: never while the server rests
// (Config.Rest), and counted from the wake once it is awake again. While
// it is, the responders answer nothing.
func (s *Server) Stale(now time.Time) bool {
	stale := s.cfg.Rest.Quiet(s.active.Last(), now, s.cfg.StaleAfter)
	if stale != s.stale.Load() && s.stale.CompareAndSwap(!stale, stale) {
		if stale {
			s.log.Warn("feed is stale: answering no queries until the next feed message", "stale_after", s.cfg.StaleAfter)
		} else {
			s.log.Info("feed is live again")
		}
	}
	return stale
}

// LastFed returns when the feed last had activity (see Activity; zero if
// never).
func (s *Server) LastFed() time.Time { return s.active.Last() }

// LiveSince returns when the feed's current run of activity began: its
// first activity, or its first after being stale (zero if never).
func (s *Server) LiveSince() time.Time { return s.active.Since() }

// Fed returns when the feed first sent state that queryd accepted (zero if
// never): until then queryd serves [server] (or the [upstream] answer).
func (s *Server) Fed() time.Time { return unixTime(s.fedAt.Load()) }

// unixTime is n unix nanoseconds as a time; zero for 0.
func unixTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// Activity reports whether a message with op and its reply's ok is feed
// activity, which keeps queryd from going stale: a replace or patch that
// was accepted, or a ping. A rejected state, get and peer never are (they
// only read, or changed nothing), nor is a connection that sends nothing.
// Nor is wake: it comes from the game's matchmaking, not from the game,
// and says nothing of whether the game's state is current; a server woken
// is ready (package sleep) at its feeder's first activity after the wake,
// which a wake that counted would fake. This is the one place that says
// it, for the socket and the HTTP feed.
func Activity(op string, ok bool) bool {
	switch op {
	case "replace", "patch":
		return ok
	case "ping":
		return true
	}
	return false
}

// noteActivity records the activity of a message with op and its reply.
func (s *Server) noteActivity(op string, rep Reply) {
	if !Activity(op, rep.OK) {
		return
	}
	now := time.Now()
	s.active.Note(now, s.cfg.StaleAfter)
	if op != "ping" {
		s.fedAt.CompareAndSwap(0, now.UnixNano())
	}
}

func (s *Server) serveConn(c net.Conn) {
	defer c.Close()
	r := newLineReader(c, &s.budget, s.cfg.LineTimeout, MaxLine)
	defer r.release()
	w := bufio.NewWriter(c)
	for {
		line, err := r.readLine()
		if err != nil {
			r.release() // before the peer hears of it
			s.endConn(c, w, err)
			return
		}
		c.SetWriteDeadline(time.Now().Add(s.cfg.LineTimeout))
		err = writeReply(w, s.apply(line))
		if err == nil && !r.hasLine() {
			err = w.Flush()
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				s.dropped(DropLineTimeout) // the peer does not take its replies
			}
			return
		}
	}
}

// endConn ends a connection after a read error: a limit that was hit is
// told to the peer in an error line, and counted.
func (s *Server) endConn(c net.Conn, w *bufio.Writer, err error) {
	var reason, msg string
	switch {
	case errors.Is(err, errLineTooLong):
		reason, msg = DropLineTooLong, fmt.Sprintf("line longer than %d bytes; closing the connection", MaxLine)
	case errors.Is(err, errLineTimeout):
		reason, msg = DropLineTimeout, fmt.Sprintf("line not completed within %v ([feed] line_timeout); closing the connection", s.cfg.LineTimeout)
	case errors.Is(err, errBudget):
		reason, msg = DropMaxBuffered, fmt.Sprintf("feed buffers full: the unfinished lines of all connections may hold %d bytes ([feed] max_buffered); closing the connection", s.cfg.MaxBuffered)
	default:
		if !errors.Is(err, io.EOF) && !s.closed.Load() {
			s.log.Debug("feed connection ended", "err", err)
		}
		return
	}
	s.dropped(reason)
	c.SetWriteDeadline(time.Now().Add(min(s.cfg.LineTimeout, time.Second)))
	writeReply(w, Reply{Error: msg})
	w.Flush()
}

// reject refuses a connection over MaxConns with an error line.
func (s *Server) reject(c net.Conn) {
	s.dropped(DropMaxConns)
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	b, _ := json.Marshal(Reply{Error: fmt.Sprintf("too many feed connections (%d open, [feed] max_conns); closing", s.cfg.MaxConns)})
	c.Write(append(b, '\n'))
	c.Close()
}

// dropped counts a connection closed for reason, and warns at most once a second.
func (s *Server) dropped(reason string) {
	n := s.drops.counter(reason).Add(1)
	now := time.Now().UnixNano()
	last := s.lastWarn.Load()
	if now-last >= int64(time.Second) && s.lastWarn.CompareAndSwap(last, now) {
		s.log.Warn("feed connection closed by a limit", "reason", reason, "total", n)
	}
}

// writeReply writes one reply line; an error is the connection's.
func writeReply(w *bufio.Writer, rep Reply) error {
	b, err := json.Marshal(rep)
	if err != nil {
		b = []byte(`{"ok":false,"error":"internal: cannot encode the reply"}`)
	}
	w.Write(b)
	return w.WriteByte('\n')
}

// apply handles one message line and returns its reply.
func (s *Server) apply(line []byte) Reply {
	if len(bytes.TrimSpace(line)) == 0 {
		return Reply{Error: "empty line: want a JSON message"}
	}
	m, err := parseMessage(line)
	if err != nil {
		return Reply{Error: err.Error()}
	}
	return s.do(m)
}

// do carries out one parsed message (from the socket or the HTTP feed) and
// records whether it was activity (Activity).
func (s *Server) do(m message) Reply {
	rep := s.carryOut(m)
	s.noteActivity(m.op, rep)
	return rep
}

// carryOut carries out one parsed message.
func (s *Server) carryOut(m message) Reply {
	var err error
	switch m.op {
	case "replace", "patch":
		var r state.Result
		if m.op == "replace" {
			r, err = s.store.Put(m.state)
		} else {
			r, err = s.store.Merge(m.state)
		}
		if err != nil {
			return Reply{Error: "state." + err.Error()}
		}
		return Reply{OK: true, Version: r.Version, Warnings: state.WarningLines("state.", r.Warnings)}
	case "get":
		snap := s.store.Snapshot()
		return Reply{OK: true, Version: snap.Version, State: snap.Document()}
	case "wake":
		if s.cfg.Wake == nil {
			return Reply{Error: "wake: this server does not sleep (set [sleep] after, start and stop)"}
		}
		if err := s.cfg.Wake(); err != nil {
			return Reply{Error: "wake: " + err.Error()}
		}
		return Reply{OK: true, Version: s.store.Snapshot().Version}
	case "peer":
		if s.cfg.Peer == nil {
			return Reply{Error: "peer: relay mode is off (set [relay] upstream)"}
		}
		p, local, err := s.cfg.Peer(m.port, m.addr)
		if err != nil {
			return Reply{Error: "peer: " + err.Error()}
		}
		return Reply{OK: true, Version: s.store.Snapshot().Version, Peer: p, Local: local}
	}
	return Reply{OK: true, Version: s.store.Snapshot().Version} // ping
}
