//go:build !linux || !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"context"

	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/responder"
)

// FastPath is the XDP fast path; outside Linux it cannot be made.
type FastPath struct{}

// New returns ErrUnsupported outside Linux.
func New(Config) (*FastPath, error) { return nil, ErrUnsupported }

// Name is the part's label in logs.
func (*FastPath) Name() string { return "xdp" }

// Serve returns at once.
func (*FastPath) Serve(context.Context) error { return nil }

// SetServers does nothing outside Linux.
func (*FastPath) SetServers([]Server) error { return ErrUnsupported }

// SetProtocols does nothing outside Linux.
func (*FastPath) SetProtocols(string, []module.Protocol) {}

// SetLimits does nothing outside Linux.
func (*FastPath) SetLimits(string, responder.Limits) {}

// SetHostLimits does nothing outside Linux.
func (*FastPath) SetHostLimits(responder.HostLimits) error { return ErrUnsupported }

// SetDeny does nothing outside Linux.
func (*FastPath) SetDeny(string, *responder.Deny) {}

// Changed does nothing outside Linux.
func (*FastPath) Changed(string) {}

// DrainSources returns dst outside Linux.
func (*FastPath) DrainSources(dst []responder.SourceCount) []responder.SourceCount { return dst }

// DrainServerSources returns dst outside Linux.
func (*FastPath) DrainServerSources(_ string, dst []responder.SourceCount) []responder.SourceCount {
	return dst
}

// Counts returns nothing outside Linux.
func (*FastPath) Counts() []responder.Counts { return nil }

// CountsOf counts nothing outside Linux.
func (*FastPath) CountsOf(string) responder.CountSource { return noCounts{} }

// noCounts is CountsOf's source outside Linux.
type noCounts struct{}

// Counts returns nothing.
func (noCounts) Counts() []responder.Counts { return nil }

// Pass is the pass-everything program (pass_linux.go); outside Linux it
// cannot be made.
type Pass struct{}

// AttachPass returns ErrUnsupported outside Linux.
func AttachPass(string) (*Pass, error) { return nil, ErrUnsupported }

// UDP returns nothing outside Linux.
func (*Pass) UDP() (uint64, error) { return 0, ErrUnsupported }

// Close does nothing outside Linux.
func (*Pass) Close() error { return nil }

// Echo is the benchmark's echo program (pass_linux.go); outside Linux it
// cannot be made.
type Echo struct{}

// AttachEcho returns ErrUnsupported outside Linux.
func AttachEcho(string, bool) (*Echo, error) { return nil, ErrUnsupported }

// Close does nothing outside Linux.
func (*Echo) Close() error { return nil }
