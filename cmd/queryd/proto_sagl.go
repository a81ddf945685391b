package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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
	p := &saglProto{
		Handler: h,
		cfgLogo: c.SAGL.Logo,
		srvLogo: serverLogo(c),
		maxLogo: int64(c.SAGL.MaxLogo),
		log:     d.log.With("protocol", "sagl"),
	}
	if c.SAGL.LogoDir != "" {
		// Opened once (and again on SIGHUP): renaming the path later
		// leads no feed-set logo out of the directory it named.
		root, err := sagl.OpenLogoDir(c.SAGL.LogoDir)
		if err != nil {
			p.log.Warn("feed-set logos not served", "err", err)
		}
		p.logoDir = root
	}
	// The operator's logo, read here (not under the store's lock; the open
	// never blocks) so that the first reply already carries it.
	ref := logoRef{path: p.cfgLogo}
	if p.srvLogo != "" {
		ref.path = p.srvLogo
	}
	p.have, p.logo = ref, p.load(ref, nil)
	return p, nil
}

// saglProto is the SAGL handler plus its logo file: the feed's
// branding.logo (confined to [sagl] logo_dir), else [sagl] logo. Update runs
// under the store's lock and so never touches a file: it publishes the
// snapshot at once with the logo already loaded for its path (none for a
// new path) and leaves the reading to one loader goroutine, which
// publishes again when the file is read. A missing or invalid file is
// logged and served as no logo.
type saglProto struct {
	*sagl.Handler
	cfgLogo string   // [sagl] logo
	srvLogo string   // [server] branding.logo: the operator's too
	logoDir *os.Root // [sagl] logo_dir; nil: feed-set logos are refused
	maxLogo int64
	log     *slog.Logger

	mu      sync.Mutex // guards the fields below and orders the publishes
	snap    *state.Snapshot
	want    logoRef    // the logo snap asks for
	have    logoRef    // the logo loaded (or failed) last; logo is its result
	logo    *sagl.Logo // nil: none, or not loaded
	loading bool       // the loader goroutine is running
	closed  bool
}

// logoRef names a logo file: a feed-set path (relative to logo_dir) or the
// config's. The zero value is no logo.
type logoRef struct {
	path string
	feed bool
}

// Update publishes snap with the logo loaded for its path, and starts the
// loader when the path has changed. It does no file I/O.
func (p *saglProto) Update(snap *state.Snapshot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.snap != nil && snap.Version < p.snap.Version {
		return
	}
	p.snap = snap
	p.want = p.refOf(snap)
	if p.want.path == "" {
		p.have, p.logo = p.want, nil
	}
	var logo *sagl.Logo
	if p.want == p.have {
		logo = p.logo
	} else if !p.loading && !p.closed {
		p.loading = true
		go p.loadLoop()
	}
	p.Handler.Publish(snap, logo)
}

// refOf returns the logo snap asks for: its branding.logo, confined to
// logo_dir unless it is the one the config's [server] names, else the
// [sagl] logo.
func (p *saglProto) refOf(snap *state.Snapshot) logoRef {
	switch path := snap.Branding.Logo; path {
	case "":
		return logoRef{path: p.cfgLogo}
	case p.srvLogo:
		return logoRef{path: path}
	default:
		return logoRef{path: path, feed: true}
	}
}

// serverLogo returns the config's [server] branding.logo, or "".
func serverLogo(c *config.Config) string {
	b, _ := c.ServerDoc["branding"].(map[string]any)
	s, _ := b["logo"].(string)
	return s
}

// loadLoop reads the wanted logo until the one loaded is the one the latest
// snapshot wants (the latest path wins; a path wanted no longer is not
// published), then ends. One runs at a time per saglProto.
func (p *saglProto) loadLoop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for !p.closed && p.want != p.have {
		ref, dir := p.want, p.logoDir
		p.mu.Unlock()
		logo := p.load(ref, dir)
		p.mu.Lock()
		if p.closed || ref != p.want {
			continue
		}
		p.have, p.logo = ref, logo
		p.Handler.Publish(p.snap, logo)
	}
	p.loading = false
	if p.closed {
		p.closeDir()
	}
}

// load reads the logo ref names (a feed-set one inside dir), or logs why
// not and returns nil.
func (p *saglProto) load(ref logoRef, dir *os.Root) *sagl.Logo {
	if ref.path == "" {
		return nil
	}
	var logo *sagl.Logo
	var err error
	if ref.feed {
		logo, err = sagl.ReadLogoIn(dir, ref.path, p.maxLogo)
	} else {
		logo, err = sagl.ReadLogoFile(ref.path, p.maxLogo)
	}
	if err != nil {
		p.log.Warn("logo not served", "path", ref.path, "from", ref.source(), "err", err)
		return nil
	}
	p.log.Info("logo loaded", "path", ref.path, "from", ref.source(), "bytes", len(logo.Data), "sha256", logo.Hex())
	return logo
}

func (r logoRef) source() string {
	if r.feed {
		return "feed branding.logo"
	}
	return "config"
}

// Close stops the loader (a load in progress is not published) and closes
// the logo directory once no load uses it.
func (p *saglProto) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if !p.loading {
		p.closeDir()
	}
	return nil
}

func (p *saglProto) closeDir() {
	if p.logoDir != nil {
		p.logoDir.Close()
		p.logoDir = nil
	}
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
