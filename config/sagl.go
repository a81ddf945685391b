package config

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/queryd/queryd/sagl"
)

// SAGL is [sagl]: the SAGL query (UDP and optional HTTP).
type SAGL struct {
	Enabled         bool     `toml:"enabled"`
	HTTP            string   `toml:"http"`              // "127.0.0.1:8080" serves the JSON over HTTP; "" turns it off
	HTTPMaxConns    int      `toml:"http_max_conns"`    // HTTP connections open at once; default 256
	HTTPIdleTimeout Duration `toml:"http_idle_timeout"` // keep-alive idle time while under ¾ of http_max_conns; default 60s
	Logo            string   `toml:"logo"`              // PNG or JPEG file (any path); the feed's branding.logo overrides it
	LogoDir         string   `toml:"logo_dir"`          // directory feed-set branding.logo paths are confined to; "": the feed cannot set a logo
	Players         string   `toml:"players"`           // "list" (default), "count" or "none"
	MaxLogo         ByteSize `toml:"max_logo"`          // largest logo file served; default 1 MiB
	MaxList         ByteSize `toml:"max_list"`          // bytes of JSON the players list may take before it is cut short; default 64 KiB
}

// Bounds of the [sagl] sizes.
const (
	saglMaxLogoLimit = 16 << 20 // the logo's size is a u32 on the wire; keep it sane
	saglMaxListLimit = 4 << 20
	saglMaxConnsMax  = 65536
	saglIdleMin      = time.Second
	saglIdleMax      = time.Hour
)

func defaultSAGL() SAGL {
	return SAGL{
		Enabled: true, Players: "list", MaxLogo: 1 << 20, MaxList: 64 << 10,
		HTTPMaxConns: 256, HTTPIdleTimeout: Duration(60 * time.Second),
	}
}

func (c *Config) validateSAGL(errs *Errors) {
	s := c.SAGL
	switch s.Players {
	case "list", "count", "none":
	default:
		errs.add("sagl.players", `want "list", "count" or "none", got %q`, s.Players)
	}
	if s.HTTP != "" {
		if _, err := netip.ParseAddrPort(s.HTTP); err != nil {
			errs.add("sagl.http", `want IP:PORT such as "127.0.0.1:8080", or "" to turn it off, got %q`, s.HTTP)
		}
	}
	if s.HTTPMaxConns < 1 || s.HTTPMaxConns > saglMaxConnsMax {
		errs.add("sagl.http_max_conns", "want 1 to %d, got %d", saglMaxConnsMax, s.HTTPMaxConns)
	}
	if d := time.Duration(s.HTTPIdleTimeout); d < saglIdleMin || d > saglIdleMax {
		errs.add("sagl.http_idle_timeout", "want 1s to 1h, got %v", d)
	}
	if s.MaxLogo < 1024 || s.MaxLogo > saglMaxLogoLimit {
		errs.add("sagl.max_logo", "want 1KiB to 16MiB, got %d bytes", s.MaxLogo)
	}
	if s.MaxList < 1024 || s.MaxList > saglMaxListLimit {
		errs.add("sagl.max_list", "want 1KiB to 4MiB, got %d bytes", s.MaxList)
	}
	if s.Logo != "" {
		if err := CheckLogoFile(s.Logo, int64(s.MaxLogo)); err != nil {
			errs.add("sagl.logo", "%v", err)
		}
	}
	if s.LogoDir != "" {
		if err := CheckLogoDir(s.LogoDir); err != nil {
			errs.add("sagl.logo_dir", "%v", err)
		}
	}
}

// CheckLogoFile reports whether path is a readable PNG or JPEG file (by its
// first bytes) of at most max bytes. It never blocks: the file is opened
// non-blocking and refused unless it is a regular file (a FIFO, a directory
// or a device is an error).
func CheckLogoFile(path string, max int64) error {
	_, err := sagl.ReadLogoFile(path, max)
	return err
}

// CheckLogoDir reports whether dir is a directory queryd can open. It
// never blocks.
func CheckLogoDir(dir string) error {
	r, err := sagl.OpenLogoDir(dir)
	if err != nil {
		return fmt.Errorf("cannot use the %w", err)
	}
	return r.Close()
}
