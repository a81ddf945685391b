package xdp

import "fmt"

// Mode is [xdp] mode: how the program is attached.
type Mode uint8

// The attach modes.
const (
	ModeNative  Mode = iota // in the driver; falls back to generic with a warning
	ModeGeneric             // after the kernel made an skb: any driver, slower
)

// String is the mode's name in the config and in metrics.
func (m Mode) String() string {
	switch m {
	case ModeNative:
		return "native"
	case ModeGeneric:
		return "generic"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// UnmarshalText accepts "native" or "generic".
func (m *Mode) UnmarshalText(b []byte) error {
	switch string(b) {
	case "native":
		*m = ModeNative
	case "generic":
		*m = ModeGeneric
	default:
		return fmt.Errorf("want native or generic, got %q", b)
	}
	return nil
}

// MarshalText writes the mode's name.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }
