package sagl

import (
	"log/slog"
	"os"
	"sync"

	"github.com/queryd/queryd/state"
)

// Protocol is the SAGL handler plus its logo file: the feed's
// branding.logo (confined to [sagl] logo_dir), else [sagl] logo. Update runs
// under the store's lock and so never touches a file: it publishes the
// snapshot at once with the logo already loaded for its path (none for a
// new path) and leaves the reading to one loader goroutine, which
// publishes again when the file is read. A missing or invalid file is
// logged and served as no logo.
type Protocol struct {
	*Handler
	cfgLogo string   // [sagl] logo
	srvLogo string   // [server] branding.logo: the operator's too
	logoDir *os.Root // [sagl] logo_dir; nil: feed-set logos are refused
	maxLogo int64
	log     *slog.Logger

	mu      sync.Mutex // guards the fields below and orders the publishes
	snap    *state.Snapshot
	want    logoRef // the logo snap asks for
	have    logoRef // the logo loaded (or failed) last; logo is its result
	logo    *Logo   // nil: none, or not loaded
	loading bool    // the loader goroutine is running
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
func (p *Protocol) Update(snap *state.Snapshot) {
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
	var logo *Logo
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
func (p *Protocol) refOf(snap *state.Snapshot) logoRef {
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
func serverLogo(base map[string]any) string {
	b, _ := base["branding"].(map[string]any)
	s, _ := b["logo"].(string)
	return s
}

// loadLoop reads the wanted logo until the one loaded is the one the latest
// snapshot wants (the latest path wins; a path wanted no longer is not
// published), then ends. One runs at a time per Protocol.
func (p *Protocol) loadLoop() {
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
func (p *Protocol) load(ref logoRef, dir *os.Root) *Logo {
	if ref.path == "" {
		return nil
	}
	var logo *Logo
	var err error
	if ref.feed {
		logo, err = ReadLogoIn(dir, ref.path, p.maxLogo)
	} else {
		logo, err = ReadLogoFile(ref.path, p.maxLogo)
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
func (p *Protocol) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if !p.loading {
		p.closeDir()
	}
	return nil
}

func (p *Protocol) closeDir() {
	if p.logoDir != nil {
		p.logoDir.Close()
		p.logoDir = nil
	}
}
