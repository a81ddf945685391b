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
	"os"
	"os/user"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/queryd/queryd/state"
)

// Config configures the feed socket.
type Config struct {
	Socket     string        // path of the Unix stream socket
	Mode       fs.FileMode   // permissions of the socket file (0660 by default)
	Group      string        // group name or id to own the socket, "" to keep the default
	StaleAfter time.Duration // silence after this much quiet once the feed has spoken; 0 disables
	// Peer, when set, answers {"op":"peer","port":N} (relay mode).
	Peer   func(port int) (string, error)
	Logger *slog.Logger
}

// Server accepts feed connections and applies their messages to a Store.
type Server struct {
	cfg     Config
	store   *state.Store
	log     *slog.Logger
	ln      *net.UnixListener
	lastFed atomic.Int64 // unix nanoseconds of the last message; 0: never
	stale   atomic.Bool  // last reported staleness, for logging the change once
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	wg      sync.WaitGroup
	closed  atomic.Bool
}

// Listen creates the socket file and returns a server ready to Serve. An
// existing socket file at the path is replaced unless a live server answers
// on it; any other kind of file there is an error and is left untouched.
func Listen(cfg Config, store *state.Store) (*Server, error) {
	if cfg.Mode == 0 {
		cfg.Mode = 0o660
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := clearSocketPath(cfg.Socket); err != nil {
		return nil, err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: cfg.Socket, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("feed socket %s: %w", cfg.Socket, err)
	}
	ln.SetUnlinkOnClose(true)
	if err := setOwnership(cfg.Socket, cfg.Mode, cfg.Group); err != nil {
		ln.Close()
		return nil, err
	}
	return &Server{cfg: cfg, store: store, log: cfg.Logger, ln: ln, conns: map[net.Conn]struct{}{}}, nil
}

func clearSocketPath(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("feed socket %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("feed socket %s: a %s is in the way; not removing it (choose another [feed] socket path or remove it yourself)", path, kindOf(fi))
	}
	if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
		c.Close()
		return fmt.Errorf("feed socket %s: another process is serving it (is queryd already running?)", path)
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

func setOwnership(path string, mode fs.FileMode, group string) error {
	if group != "" {
		gid, err := strconv.Atoi(group)
		if err != nil {
			g, lerr := user.LookupGroup(group)
			if lerr != nil {
				return fmt.Errorf("feed socket group %q: %w", group, lerr)
			}
			gid, _ = strconv.Atoi(g.Gid)
		}
		if err := os.Chown(path, -1, gid); err != nil {
			return fmt.Errorf("feed socket group %q: %w", group, err)
		}
	}
	if err := os.Chmod(path, mode); err != nil {
		return fmt.Errorf("feed socket mode %o: %w", mode, err)
	}
	return nil
}

// Path returns the socket's path.
func (s *Server) Path() string { return s.cfg.Socket }

// Serve accepts connections until Close. Each connection is served on its own goroutine.
func (s *Server) Serve() error {
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			if s.closed.Load() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
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
	s.closed.Store(true)
	err := s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// Stale reports whether the feed has spoken and then been quiet for longer
// than StaleAfter. While it is, the responders answer nothing.
func (s *Server) Stale(now time.Time) bool {
	last := s.lastFed.Load()
	if last == 0 || s.cfg.StaleAfter <= 0 {
		return false
	}
	stale := now.UnixNano()-last > int64(s.cfg.StaleAfter)
	if stale != s.stale.Load() && s.stale.CompareAndSwap(!stale, stale) {
		if stale {
			s.log.Warn("feed is stale: answering no queries until the next feed message", "stale_after", s.cfg.StaleAfter)
		} else {
			s.log.Info("feed is live again")
		}
	}
	return stale
}

// LastFed returns when the feed last sent a message (zero if never).
func (s *Server) LastFed() time.Time {
	if n := s.lastFed.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

func (s *Server) serveConn(c *net.UnixConn) {
	defer c.Close()
	r := bufio.NewReaderSize(c, 64<<10)
	w := bufio.NewWriter(c)
	for {
		line, err := readLine(r, MaxLine)
		if errors.Is(err, errLineTooLong) {
			writeReply(w, Reply{Error: fmt.Sprintf("line longer than %d bytes; closing the connection", MaxLine)})
			w.Flush()
			return
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !s.closed.Load() {
				s.log.Debug("feed connection ended", "err", err)
			}
			return
		}
		writeReply(w, s.apply(line))
		if r.Buffered() == 0 {
			if w.Flush() != nil {
				return
			}
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line without its newline (and a trailing \r). A final
// line without a newline is discarded: the writer went away mid-message.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		if len(line)+len(frag) > max+1 {
			return nil, errLineTooLong
		}
		line = append(line, frag...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return nil, err
		}
		line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
		return line, nil
	}
}

func writeReply(w *bufio.Writer, rep Reply) {
	b, err := json.Marshal(rep)
	if err != nil {
		b = []byte(`{"ok":false,"error":"internal: cannot encode the reply"}`)
	}
	w.Write(b)
	w.WriteByte('\n')
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
	s.lastFed.Store(time.Now().UnixNano())
	switch m.op {
	case "replace", "patch":
		var v uint64
		if m.op == "replace" {
			v, err = s.store.Replace(m.state)
		} else {
			v, err = s.store.Patch(m.state)
		}
		if err != nil {
			return Reply{Error: "state." + err.Error()}
		}
		return Reply{OK: true, Version: v}
	case "get":
		snap := s.store.Snapshot()
		return Reply{OK: true, Version: snap.Version, State: snap.Document()}
	case "peer":
		if s.cfg.Peer == nil {
			return Reply{Error: "peer: relay mode is off (set [relay] upstream)"}
		}
		p, err := s.cfg.Peer(m.port)
		if err != nil {
			return Reply{Error: "peer: " + err.Error()}
		}
		return Reply{OK: true, Peer: p}
	}
	return Reply{OK: true, Version: s.store.Snapshot().Version} // ping
}
