//go:build !linux || !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import "net/netip"

// DivertAddr is one [listen] divert address (divert_linux.go).
type DivertAddr struct {
	Game   netip.AddrPort
	Hidden uint16
}

// Divert is one server's divert; outside Linux it cannot be made.
type Divert struct{}

// Divert returns ErrUnsupported outside Linux.
func (*FastPath) Divert(string, []DivertAddr, []string) (*Divert, error) { return nil, ErrUnsupported }

// Close does nothing outside Linux.
func (*Divert) Close() error { return nil }

// Rest does nothing outside Linux.
func (*Divert) Rest(bool) error { return nil }

// OnJoin does nothing outside Linux.
func (*Divert) OnJoin(func(game, src netip.AddrPort)) {}
