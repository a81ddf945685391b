//go:build !linux

package steer

import (
	"errors"
	"net/netip"
	"time"
)

// Steer is unavailable outside Linux.
type Steer struct{}

// New reports that steering needs Linux.
func New(trackedIPs int, provenFor time.Duration) (*Steer, error) {
	return nil, errors.New("steering proven sources needs Linux")
}

// Group is one steered reuseport group (none outside Linux).
type Group struct{}

// Counts are the datagrams a group's program has steered.
type Counts struct{ Proven, Ordinary, Expired uint64 }

// Attach fails: steering needs Linux.
func (s *Steer) Attach(proven, ordinary []int) (*Group, error) {
	return nil, errors.New("steering proven sources needs Linux")
}

// Counts is zero.
func (g *Group) Counts() (Counts, error) { return Counts{}, nil }

// Close does nothing.
func (g *Group) Close() error { return nil }

// Prove does nothing.
func (s *Steer) Prove(ip netip.Addr) {}

// Close does nothing.
func (s *Steer) Close() error { return nil }
