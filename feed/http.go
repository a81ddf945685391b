package feed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/queryd/queryd/netlimit"
)

// Defaults of the HTTP feed (HTTPConfig fields left zero).
const (
	DefaultHTTPMaxConns    = 16
	DefaultHTTPIdleTimeout = 60 * time.Second
	// httpHeaderTimeout bounds the reading of a request's headers (at most the line timeout).
	httpHeaderTimeout = 5 * time.Second
	// httpMaxHeader is the most header bytes a request may send.
	httpMaxHeader = 8 << 10
)

// HTTPConfig configures the HTTP feed ([feed] http).
type HTTPConfig struct {
	Addr      netip.AddrPort // a loopback address (CheckHTTPAddr); port 0 picks one
	TokenFile string         // the bearer token's file (ReadToken)
	// MaxConns caps the connections open at once: past ¾ of it idle ones
	// are closed, longest idle first, as new ones come; one over it gets a
	// 503 and is closed. 0: DefaultHTTPMaxConns.
	MaxConns int
	// IdleTimeout is how long a keep-alive connection may wait for its
	// next request while under ¾ of MaxConns. 0: DefaultHTTPIdleTimeout.
	IdleTimeout time.Duration
}

// CheckHTTPAddr accepts only loopback addresses (127.0.0.0/8, ::1): the
// feed is the game server's, not the network's.
func CheckHTTPAddr(ap netip.AddrPort) error {
	if !ap.Addr().IsLoopback() || ap.Addr().Is4In6() {
		return fmt.Errorf("want a loopback address such as \"127.0.0.1:27017\" or \"[::1]:27017\" (the feed is the game server's, not the network's), got %q", ap)
	}
	return nil
}

// connKey is the request context's key of its connection.
type connKey struct{}

// HTTPServer is the HTTP feed: the socket's messages as requests, with a
// bearer token, applied by the Server it belongs to (same validation,
// limits, errors and staleness).
type HTTPServer struct {
	feed  *Server
	cfg   HTTPConfig
	log   *slog.Logger
	token atomic.Pointer[tokenHash]
	ln    *netlimit.Listener
	shed  *netlimit.Shedder
	srv   *http.Server
	codes codeCounts
}

// ListenHTTP reads the token and opens the HTTP feed's listener; Serve
// then serves it. The address must pass CheckHTTPAddr.
func (s *Server) ListenHTTP(cfg HTTPConfig) (*HTTPServer, error) {
	if err := CheckHTTPAddr(cfg.Addr); err != nil {
		return nil, fmt.Errorf("feed http: %w", err)
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultHTTPMaxConns
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultHTTPIdleTimeout
	}
	h := &HTTPServer{feed: s, cfg: cfg, log: s.log.With("listener", "http")}
	if err := h.ReloadToken(); err != nil {
		return nil, err
	}
	raw, err := net.Listen("tcp", cfg.Addr.String())
	if err != nil {
		return nil, fmt.Errorf("feed http listen %s: %w", cfg.Addr, err)
	}
	lt := s.cfg.LineTimeout
	h.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: min(httpHeaderTimeout, lt),
		ReadTimeout:       lt,     // headers and body
		WriteTimeout:      2 * lt, // from the end of the headers: the body, then the answer
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    httpMaxHeader,
		ErrorLog:          slog.NewLogLogger(h.log.Handler(), slog.LevelDebug),
	}
	h.ln = &netlimit.Listener{Listener: raw, Max: cfg.MaxConns, Reject: h.reject, Logger: h.log}
	// A connection is proven by a request with the token: until then it
	// may be shed busy or idle, so that tricklers without the token cannot
	// hold the cap the game server needs.
	h.shed = &netlimit.Shedder{Listener: h.ln, Unproven: true}
	h.srv.ConnState = h.shed.ConnState
	h.srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, c)
	}
	h.log.Info("feed listening", "http", raw.Addr().String(), "max_conns", cfg.MaxConns)
	return h, nil
}

// ReloadToken reads the token file again (SIGHUP). On an error the token
// in use is kept.
func (h *HTTPServer) ReloadToken() error {
	tok, err := ReadToken(h.cfg.TokenFile)
	if err != nil {
		return fmt.Errorf("feed http_token_file: %w", err)
	}
	h.token.Store(hashToken(tok))
	return nil
}

// Addr returns the bound address (useful with port 0).
func (h *HTTPServer) Addr() net.Addr { return h.ln.Addr() }

// Serve serves until Close; another end is the listener failing.
func (h *HTTPServer) Serve() error {
	if err := h.srv.Serve(h.ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("feed http: %w", err)
	}
	return nil
}

// Close stops the listener and lets requests in flight finish for a second.
func (h *HTTPServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := h.srv.Shutdown(ctx); err != nil {
		return h.srv.Close()
	}
	return nil
}

// reject answers a connection over the cap with a 503 and closes it. It
// runs in the accept loop: the write goes to an empty socket buffer.
func (h *HTTPServer) reject(c net.Conn) {
	b, _ := json.Marshal(Reply{Error: fmt.Sprintf("too many feed HTTP connections (%d open, [feed] http_max_conns); closing", h.cfg.MaxConns)})
	c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: application/json\r\nRetry-After: 1\r\nContent-Length: %d\r\n\r\n%s\n", len(b)+1, b)
	c.Close()
}

// HTTPStats is what the HTTP feed holds and has answered.
type HTTPStats struct {
	Open       int               // connections open
	OverCap    uint64            // connections refused with a 503 at the cap
	Shed       uint64            // idle connections closed past ¾ of the cap
	AcceptWait uint64            // accepts retried for want of descriptors or memory
	Responses  map[string]uint64 // answers by status code ("200", "400", …: HTTPCodes)
}

// Stats returns what the HTTP feed holds and has answered.
func (h *HTTPServer) Stats() HTTPStats {
	return HTTPStats{
		Open: h.ln.Open(), OverCap: h.ln.Rejected(), Shed: h.shed.Shed(), AcceptWait: h.ln.Retried(),
		Responses: h.codes.snapshot(),
	}
}

// HTTPCodes are the status codes the HTTP feed answers with (Stats.Responses).
var HTTPCodes = []int{
	http.StatusOK, http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound,
	http.StatusMethodNotAllowed, http.StatusRequestEntityTooLarge, http.StatusMisdirectedRequest,
}

// codeCounts counts answers by status code (one of HTTPCodes).
type codeCounts [7]atomic.Uint64

func (c *codeCounts) add(code int) {
	for i, k := range HTTPCodes {
		if k == code {
			c[i].Add(1)
			return
		}
	}
}

func (c *codeCounts) snapshot() map[string]uint64 {
	m := make(map[string]uint64, len(HTTPCodes))
	for i, k := range HTTPCodes {
		m[fmt.Sprint(k)] = c[i].Load()
	}
	return m
}
