//go:build !linux

package responder

import (
	"errors"
	"net"
	"net/netip"
)

const msgTrunc = 0

const defaultSocket = SocketPortable

const batchSupported = false

func listenBatch(netip.AddrPort, SocketConfig) (listener, error) {
	return nil, errors.New("the batch socket layer is Linux-only")
}

// listenUDP opens a plain UDP socket: without packet info, replies leave from
// the address the kernel chooses (bind to a specific address to control it).
func listenUDP(ap netip.AddrPort, _ int) (*net.UDPConn, error) {
	network := "udp4"
	if ap.Addr().Is6() {
		network = "udp6"
	}
	return net.ListenUDP(network, net.UDPAddrFromAddrPort(ap))
}

// replyControl appends nothing: packet info is Linux-only here.
func replyControl(b, _ []byte) []byte { return b }

// localAddr returns the zero Addr: packet info is Linux-only here.
func localAddr(_ []byte) netip.Addr { return netip.Addr{} }

// controlFrom appends nothing: packet info is Linux-only here.
func controlFrom(b []byte, _ netip.Addr) []byte { return b }
