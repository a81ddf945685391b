//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"errors"
	"fmt"
	"net"

	"github.com/cilium/ebpf/link"
)

// Pass is a program that passes every frame (bpf/test.c, in its own
// object: the daemon never loads it), counting the UDP ones, attached
// to an interface in native mode. A veth receives the frames its peer sends
// with XDP_TX only when it has an XDP program (or GRO) itself: the tests and
// the benchmark put one on the client's end of their veth pair, and the
// benchmark counts answers with it.
type Pass struct {
	objs querydtestObjects
	l    link.Link
}

// AttachPass attaches a Pass to the interface named ifname.
func AttachPass(ifname string) (*Pass, error) {
	p := &Pass{}
	if err := loadQuerydtestObjects(&p.objs, nil); err != nil {
		return nil, fmt.Errorf("load the pass program: %w", err)
	}
	ifc, err := net.InterfaceByName(ifname)
	if err != nil {
		p.objs.Close()
		return nil, fmt.Errorf("interface %q: %w", ifname, err)
	}
	p.l, err = link.AttachXDP(link.XDPOptions{Program: p.objs.QuerydPass, Interface: ifc.Index, Flags: link.XDPDriverMode})
	if err != nil {
		p.objs.Close()
		return nil, fmt.Errorf("attach the pass program to %q: %w", ifname, err)
	}
	return p, nil
}

// UDP returns how many UDP frames the interface has received since attach.
func (p *Pass) UDP() (uint64, error) {
	var per []uint64
	if err := p.objs.PassUdp.Lookup(uint32(0), &per); err != nil {
		return 0, err
	}
	var n uint64
	for _, v := range per {
		n += v
	}
	return n, nil
}

// Close detaches and frees the program.
func (p *Pass) Close() error { return errors.Join(p.l.Close(), p.objs.Close()) }

// Echo is the benchmark's baseline program (bpf/test.c queryd_echo): it
// sends every IPv4 or IPv6 UDP datagram to port 27015 back with XDP_TX, addresses
// and ports swapped, doing nothing else; or, per source, also adding one
// to the source's slot of a table of 65,536 cache lines
// (queryd_echo_state: the per-source state every program with budgets
// and counts touches).
type Echo struct {
	objs querydtestObjects
	l    link.Link
}

// AttachEcho attaches an Echo to the interface named ifname in native
// mode: queryd_echo_state when perSource, else queryd_echo.
func AttachEcho(ifname string, perSource bool) (*Echo, error) {
	e := &Echo{}
	if err := loadQuerydtestObjects(&e.objs, nil); err != nil {
		return nil, fmt.Errorf("load the echo program: %w", err)
	}
	ifc, err := net.InterfaceByName(ifname)
	if err != nil {
		e.objs.Close()
		return nil, fmt.Errorf("interface %q: %w", ifname, err)
	}
	prog := e.objs.QuerydEcho
	if perSource {
		prog = e.objs.QuerydEchoState
	}
	e.l, err = link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifc.Index, Flags: link.XDPDriverMode})
	if err != nil {
		e.objs.Close()
		return nil, fmt.Errorf("attach the echo program to %q: %w", ifname, err)
	}
	return e, nil
}

// Close detaches and frees the program.
func (e *Echo) Close() error { return errors.Join(e.l.Close(), e.objs.Close()) }
