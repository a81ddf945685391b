package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/sagl"
	"github.com/queryd/queryd/state"
)

func buildSAGL(c *config.Config, d deps) (protocol, error) {
	if !c.SAGL.Enabled {
		return nil, nil
	}
	mode, ok := sagl.ParsePlayersMode(c.SAGL.Players)
	if !ok {
		return nil, fmt.Errorf("sagl.players: unknown mode %q", c.SAGL.Players)
	}
	h := sagl.NewHandler(sagl.Config{Players: mode, MaxList: int(c.SAGL.MaxList)}, d.issuer)
	return &saglProto{
		Handler: h,
		cfgLogo: c.SAGL.Logo,
		maxLogo: int64(c.SAGL.MaxLogo),
		log:     d.log.With("protocol", "sagl"),
	}, nil
}

// saglProto is the SAGL handler plus its logo file: the feed's
// branding.logo, else [sagl] logo. The file is read when the path changes
// (and on reload, which makes a new saglProto); a missing or invalid file is
// logged and served as no logo.
type saglProto struct {
	*sagl.Handler
	cfgLogo string
	maxLogo int64
	log     *slog.Logger

	mu     sync.Mutex // guards the fields below; Update calls are serialized anyway
	loaded bool
	path   string
	logo   *sagl.Logo
}

// Update encodes the replies for snap with the logo its path names.
func (p *saglProto) Update(snap *state.Snapshot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	path := snap.Branding.Logo
	if path == "" {
		path = p.cfgLogo
	}
	if !p.loaded || path != p.path {
		p.loaded, p.path, p.logo = true, path, nil
		if path != "" {
			logo, err := readLogo(path, p.maxLogo)
			if err != nil {
				p.log.Warn("logo not served", "path", path, "err", err)
			} else {
				p.logo = logo
				p.log.Info("logo loaded", "path", path, "bytes", len(logo.Data), "sha256", logo.Hex())
			}
		}
	}
	p.Handler.Publish(snap, p.logo)
}

// readLogo reads a PNG or JPEG file of at most max bytes.
func readLogo(path string, max int64) (*sagl.Logo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	logo, err := sagl.NewLogo(data, int(max))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return logo, nil
}

// currentSAGL returns the live SAGL handler, or nil.
func (d *daemon) currentSAGL() *sagl.Handler {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.protos {
		if s, ok := p.(*saglProto); ok {
			return s.Handler
		}
	}
	return nil
}

func servicesSAGL(c *config.Config, d *daemon) ([]service, error) {
	if !c.SAGL.Enabled || c.SAGL.HTTP == "" {
		return nil, nil
	}
	return []service{&saglHTTP{
		addr: c.SAGL.HTTP,
		log:  d.log.With("part", "sagl-http"),
		srv: &http.Server{
			Handler:           &sagl.HTTP{Current: d.currentSAGL, Silent: d.feed.Stale},
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       10 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       60 * time.Second,
			MaxHeaderBytes:    16 << 10,
		},
	}}, nil
}

// saglHTTP serves the SAGL JSON and logo over HTTP ([sagl] http).
type saglHTTP struct {
	addr string
	log  *slog.Logger
	srv  *http.Server
	ln   net.Listener
}

// Start opens the listener and serves in the background.
func (s *saglHTTP) Start() error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("sagl http listen %s: %w", s.addr, err)
	}
	s.ln = ln
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("stopped", "err", err)
		}
	}()
	s.log.Info("listening", "http", ln.Addr().String())
	return nil
}

// Addr returns the bound address (useful with port 0).
func (s *saglHTTP) Addr() string { return s.ln.Addr().String() }

// Close stops the listener, letting requests in flight finish for a second.
func (s *saglHTTP) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

// querySAGL asks a server for its SAGL JSON (and with -logo saves the logo,
// checked against its SHA-256). The JSON is returned as the server sent it;
// the round trip goes to stderr, like the spec's sagl-query.
func querySAGL(addr string, q queryOpts) (any, error) {
	start := time.Now()
	c, err := sagl.Dial(addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.Timeout = q.timeout
	res, err := c.Info()
	if err != nil {
		return nil, err
	}
	if !q.quiet {
		fmt.Fprintf(os.Stderr, "sagl %s: round trip %.2f ms\n", addr, float64(res.RTT.Microseconds())/1000)
	}
	if q.logo != "" {
		if err := saveSAGLLogo(c, q, start); err != nil {
			return nil, err
		}
	}
	return json.RawMessage(res.JSON), nil
}

func saveSAGLLogo(c *sagl.Client, q queryOpts, start time.Time) error {
	c.Timeout = max(q.timeout-time.Since(start), time.Millisecond)
	lr, err := c.Logo()
	if err != nil {
		return fmt.Errorf("logo: %w", err)
	}
	if lr.Data == nil {
		return errors.New("logo: the server has no logo")
	}
	if err := os.WriteFile(q.logo, lr.Data, 0o644); err != nil {
		return fmt.Errorf("logo: %w", err)
	}
	fmt.Fprintf(os.Stderr, "logo: %d bytes, sha256 %x, saved to %s\n", len(lr.Data), lr.Sum, q.logo)
	return nil
}
