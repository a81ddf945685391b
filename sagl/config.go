package sagl

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/queryd/queryd/config"
)

// Section is [sagl]: the SAGL query (UDP and optional HTTP).
type Section struct {
	Enabled         bool            `toml:"enabled"`
	HTTP            netip.AddrPort  `toml:"http"`              // "127.0.0.1:8080" serves the JSON over HTTP; "" turns it off
	HTTPMaxConns    int             `toml:"http_max_conns"`    // HTTP connections open at once; default DefaultHTTPMaxConns
	HTTPIdleTimeout config.Duration `toml:"http_idle_timeout"` // keep-alive idle time while under ¾ of http_max_conns; default 60s
	Logo            string          `toml:"logo"`              // PNG or JPEG file (any path); the feed's branding.logo overrides it
	LogoDir         string          `toml:"logo_dir"`          // directory feed-set branding.logo paths are confined to; "": the feed cannot set a logo
	Players         PlayersMode     `toml:"players"`           // "list" (default), "count" or "none"
	MaxLogo         config.ByteSize `toml:"max_logo"`          // largest logo file served; default 1 MiB
	MaxList         config.ByteSize `toml:"max_list"`          // bytes of JSON the players list may take before it is cut short; default 64 KiB
}

// Defaults and bounds of [sagl].
const (
	// DefaultHTTPMaxConns is http_max_conns unless set.
	DefaultHTTPMaxConns = 256
	// DefaultHTTPIdleTimeout is http_idle_timeout unless set.
	DefaultHTTPIdleTimeout = 60 * time.Second
	// DefaultMaxLogo is max_logo unless set.
	DefaultMaxLogo = 1 << 20
	maxLogoLimit   = 16 << 20 // the logo's size is a u32 on the wire; keep it sane
	maxListLimit   = 4 << 20
	maxConnsLimit  = 65536
	idleMin        = time.Second
	idleMax        = time.Hour
)

// NewSection returns [sagl] with its defaults.
func NewSection() *Section {
	return &Section{
		Enabled: true, Players: PlayersList, MaxLogo: DefaultMaxLogo, MaxList: DefaultMaxList,
		HTTPMaxConns: DefaultHTTPMaxConns, HTTPIdleTimeout: config.Duration(DefaultHTTPIdleTimeout),
	}
}

// On reports whether SAGL is answered.
func (s *Section) On() bool { return s.Enabled }

// Check validates [sagl]; the logo file and logo_dir are opened (never
// blocking: a FIFO or a device is refused, not read).
func (s *Section) Check(_ *config.Config, errs *config.Errors) {
	if s.HTTPMaxConns < 1 || s.HTTPMaxConns > maxConnsLimit {
		errs.Add("sagl.http_max_conns", "want 1 to %d, got %d", maxConnsLimit, s.HTTPMaxConns)
	}
	if d := time.Duration(s.HTTPIdleTimeout); d < idleMin || d > idleMax {
		errs.Add("sagl.http_idle_timeout", "want 1s to 1h, got %v", d)
	}
	if s.MaxLogo < 1024 || s.MaxLogo > maxLogoLimit {
		errs.Add("sagl.max_logo", "want 1KiB to 16MiB, got %d bytes", s.MaxLogo)
	}
	if s.MaxList < 1024 || s.MaxList > maxListLimit {
		errs.Add("sagl.max_list", "want 1KiB to 4MiB, got %d bytes", s.MaxList)
	}
	if s.Logo != "" {
		if _, err := ReadLogoFile(s.Logo, int64(s.MaxLogo)); err != nil {
			errs.Add("sagl.logo", "%v", err)
		}
	}
	if s.LogoDir != "" {
		if r, err := OpenLogoDir(s.LogoDir); err != nil {
			errs.Add("sagl.logo_dir", "cannot use the %v", err)
		} else {
			r.Close()
		}
	}
}

// RestartKeys lists the HTTP keys (the listener starts once).
func (s *Section) RestartKeys(old config.Section) []string {
	o, ok := old.(*Section)
	if !ok {
		return []string{"sagl.http"}
	}
	var keys []string
	if o.HTTP != s.HTTP || o.Enabled != s.Enabled && s.HTTP.IsValid() {
		keys = append(keys, "sagl.http")
	}
	if o.HTTPMaxConns != s.HTTPMaxConns {
		keys = append(keys, "sagl.http_max_conns")
	}
	if o.HTTPIdleTimeout != s.HTTPIdleTimeout {
		keys = append(keys, "sagl.http_idle_timeout")
	}
	return keys
}

// Descriptors returns http_max_conns when the HTTP listener is on.
func (s *Section) Descriptors() (string, int) {
	if !s.Enabled || !s.HTTP.IsValid() {
		return "sagl.http_max_conns", 0
	}
	return "sagl.http_max_conns", s.HTTPMaxConns
}

// LimitDescriptors lowers http_max_conns to n.
func (s *Section) LimitDescriptors(n int) { s.HTTPMaxConns = min(s.HTTPMaxConns, max(n, 1)) }

// Binds returns the HTTP listener's address when it is on (host mode
// refuses two servers on one).
func (s *Section) Binds() []config.Bind {
	if !s.Enabled || !s.HTTP.IsValid() {
		return nil
	}
	return []config.Bind{{Key: "sagl.http", Network: "tcp", Addr: s.HTTP}}
}

// UnmarshalText accepts "list", "count" or "none".
func (m *PlayersMode) UnmarshalText(b []byte) error {
	v, ok := ParsePlayersMode(string(b))
	if !ok || len(b) == 0 {
		return fmt.Errorf(`want "list", "count" or "none", got %q`, b)
	}
	*m = v
	return nil
}

var (
	_ config.Section        = (*Section)(nil)
	_ config.Restarter      = (*Section)(nil)
	_ config.DescriptorUser = (*Section)(nil)
	_ config.Binder         = (*Section)(nil)
)
