//go:build !linux

package hostile

import (
	"errors"
	"net/netip"
)

// rawSender is Linux-only; elsewhere the flood test skips.
type rawSender struct{}

func newRawSender(netip.AddrPort) (*rawSender, error) {
	return nil, errors.New("raw sender: Linux only")
}

func (r *rawSender) Send(netip.AddrPort, []byte) error { return errors.New("raw sender: Linux only") }

func (r *rawSender) Close() error { return nil }

func rawSupported() string { return "spoofed sources need a Linux raw socket" }
