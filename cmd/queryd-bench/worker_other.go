//go:build !linux

package main

import (
	"errors"
	"net/netip"
	"time"
)

var errLinuxOnly = errors.New("the load generator needs Linux (recvmmsg/sendmmsg)")

// batchIO is Linux-only.
type batchIO struct{}

func (b *batchIO) close() {}

func openSource(netip.Addr, netip.AddrPort, string, int) (*batchIO, error) {
	return nil, errLinuxOnly
}

func (w *worker) run(time.Time) error { return errLinuxOnly }

func selfCPU() (time.Duration, error) { return 0, errLinuxOnly }
