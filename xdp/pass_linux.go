//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// AttachPass attaches a program that passes every frame to the interface
// named ifname, in native mode. A veth receives the frames its peer sends
// with XDP_TX only when it has an XDP program (or GRO) itself: the tests
// and the benchmark put it on the client's end of their veth pair. Close
// detaches it.
func AttachPass(ifname string) (io.Closer, error) {
	spec, err := loadQueryd()
	if err != nil {
		return nil, err
	}
	prog, err := ebpf.NewProgram(spec.Programs[querydProgQuerydPass])
	if err != nil {
		return nil, fmt.Errorf("load the pass program: %w", err)
	}
	ifc, err := net.InterfaceByName(ifname)
	if err != nil {
		prog.Close()
		return nil, fmt.Errorf("interface %q: %w", ifname, err)
	}
	l, err := link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifc.Index, Flags: link.XDPDriverMode})
	if err != nil {
		prog.Close()
		return nil, fmt.Errorf("attach the pass program to %q: %w", ifname, err)
	}
	return passLink{l, prog}, nil
}

type passLink struct {
	l    link.Link
	prog *ebpf.Program
}

func (p passLink) Close() error { return errors.Join(p.l.Close(), p.prog.Close()) }
