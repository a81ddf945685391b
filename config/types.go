package config

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Duration is a TOML string such as "60s" or "2m".
type Duration time.Duration

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("want a duration such as \"60s\" or \"2m\", got %q", b)
	}
	if v < 0 {
		return fmt.Errorf("want a duration of zero or more, got %q", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText formats the duration like time.Duration.String.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// ByteSize is a number of bytes: a TOML integer, or a string with a unit
// ("256KiB", "1MiB", "500KB"; KiB/MiB/GiB are powers of 1024, KB/MB/GB of 1000).
type ByteSize int64

var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000},
	{"B", 1},
}

// UnmarshalTOML accepts an integer or a string with a unit.
func (b *ByteSize) UnmarshalTOML(v any) error {
	switch t := v.(type) {
	case int64:
		if t < 0 {
			return fmt.Errorf("want a size of zero or more bytes, got %d", t)
		}
		*b = ByteSize(t)
		return nil
	case string:
		n, err := ParseByteSize(t)
		if err != nil {
			return err
		}
		*b = n
		return nil
	}
	return fmt.Errorf("want a size in bytes (an integer, or a string such as \"256KiB\"), got %s", tomlType(v))
}

// ParseByteSize parses "256KiB", "1MiB", "500KB", "1500" or "1500B".
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<50)/mult {
		return 0, fmt.Errorf("want a size such as \"256KiB\", \"1MiB\" or a number of bytes, got %q", s)
	}
	return ByteSize(n * mult), nil
}

// AddrPorts is a list of IP:PORT addresses ([listen] udp). Each element
// is checked on its own, so every bad or repeated one is reported.
type AddrPorts []netip.AddrPort

// decodeKey decodes a TOML array of "IP:PORT" strings, reporting every bad
// or repeated element with its index.
func (a *AddrPorts) decodeKey(key string, raw any, errs *Errors) {
	list, ok := raw.([]any)
	if !ok {
		errs.Add(key, "want a list of \"IP:PORT\" strings such as [\"0.0.0.0:27015\"], got %s", tomlType(raw))
		return
	}
	out := make(AddrPorts, 0, len(list))
	seen := map[netip.AddrPort]bool{}
	for i, v := range list {
		k := fmt.Sprintf("%s[%d]", key, i)
		s, _ := v.(string)
		ap, err := netip.ParseAddrPort(s)
		switch {
		case err != nil:
			errs.Add(k, "want IP:PORT such as \"0.0.0.0:27015\" or \"[::]:27015\", got %s", quoted(v))
		case seen[ap]:
			errs.Add(k, "%q is listed twice", s)
		default:
			seen[ap] = true
			out = append(out, ap)
		}
	}
	*a = out
}

// LogFormat is [log] format.
type LogFormat string

// The log formats.
const (
	LogText LogFormat = "text"
	LogJSON LogFormat = "json"
)

// UnmarshalText accepts "text" or "json".
func (f *LogFormat) UnmarshalText(b []byte) error {
	switch v := LogFormat(b); v {
	case LogText, LogJSON:
		*f = v
		return nil
	}
	return fmt.Errorf("want text or json, got %q", b)
}

// XDPMode is [xdp] mode: how the XDP program is attached.
type XDPMode string

// The XDP attach modes.
const (
	XDPNative  XDPMode = "native"  // in the driver; falls back to generic with a warning
	XDPGeneric XDPMode = "generic" // after the kernel made an skb (any driver; slower)
)

// UnmarshalText accepts "native" or "generic".
func (m *XDPMode) UnmarshalText(b []byte) error {
	switch v := XDPMode(b); v {
	case XDPNative, XDPGeneric:
		*m = v
		return nil
	}
	return fmt.Errorf("want native or generic, got %q", b)
}

// Prefixes is [limits] deny: "CIDR" entries ("198.51.100.0/24",
// "2001:db8::/32"), or addresses alone (their /32 or /128).
type Prefixes []netip.Prefix

// decodeKey takes an array of strings, reporting every bad one with its
// index ("limits.deny[2]").
func (ps *Prefixes) decodeKey(key string, raw any, errs *Errors) {
	list, ok := raw.([]any)
	if !ok {
		errs.Add(key, "want an array of prefixes such as [\"198.51.100.0/24\", \"2001:db8::/32\"], got %s", tomlType(raw))
		return
	}
	out := make(Prefixes, 0, len(list))
	for i, v := range list {
		p, err := parsePrefix(v)
		if err != nil {
			errs.Add(fmt.Sprintf("%s[%d]", key, i), "%v", err)
			continue
		}
		out = append(out, p)
	}
	*ps = out
}

// parsePrefix takes "CIDR" or an address alone.
func parsePrefix(v any) (netip.Prefix, error) {
	s, ok := v.(string)
	if !ok {
		return netip.Prefix{}, fmt.Errorf("want a prefix as a string, got %s", tomlType(v))
	}
	if p, err := netip.ParsePrefix(s); err == nil {
		return p, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("want a prefix such as \"198.51.100.0/24\" or \"2001:db8::/32\", or an address, got %q", s)
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}
