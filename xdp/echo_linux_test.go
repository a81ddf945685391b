//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"

	"github.com/cilium/ebpf"
)

// TestEchoPrograms: bench/xdp.sh's baselines, run by the kernel on one
// frame (BPF_PROG_RUN), send a datagram to port 27015 back (XDP_TX) with
// its MACs, addresses and ports swapped and its bytes otherwise the same,
// and pass any other; the per-source echo also counts the source in one
// slot of its table.
func TestEchoPrograms(t *testing.T) {
	needXDP(t)
	if testPort != 27015 {
		t.Fatalf("the echo answers port 27015, the test frames go to %d", testPort)
	}
	cli, srv := net.HardwareAddr{2, 0, 0, 0, 0, 2}, net.HardwareAddr{2, 0, 0, 0, 0, 1}
	in := frame{dstMAC: srv, srcMAC: cli, src: cliAddr4, dst: srvAddr4, payload: []byte("echo me")}.bytes()
	want := frame{dstMAC: cli, srcMAC: srv, src: srvAddr4, dst: cliAddr4, payload: []byte("echo me")}.bytes()
	binary.BigEndian.PutUint16(want[34:], testPort) // the swapped ports: from 27015 to the client's 40000
	binary.BigEndian.PutUint16(want[36:], 40000)
	other := bytes.Clone(in)
	binary.BigEndian.PutUint16(other[36:], 27016)
	var objs querydtestObjects
	if err := loadQuerydtestObjects(&objs, nil); err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	for _, tc := range []struct {
		name    string
		prog    *ebpf.Program
		counted uint64
	}{{"queryd_echo", objs.QuerydEcho, 0}, {"queryd_echo_state", objs.QuerydEchoState, 1}} {
		out := make([]byte, 256)
		opts := ebpf.RunOptions{Data: in, DataOut: out}
		act, err := tc.prog.Run(&opts)
		if err != nil {
			t.Fatal(err)
		}
		if act != 3 || !bytes.Equal(out[:len(want)], want) { // XDP_TX
			t.Fatalf("%s: action %d, frame\n% x\nwant XDP_TX (3) and\n% x", tc.name, act, out[:len(want)], want)
		}
		if act, err := tc.prog.Run(&ebpf.RunOptions{Data: other, DataOut: out}); err != nil || act != 2 { // XDP_PASS
			t.Fatalf("%s: to port 27016: action %d (%v), want XDP_PASS (2)", tc.name, act, err)
		}
		var counted uint64
		var k uint32
		var s querydtestEchoSlot
		for it := objs.EchoSlots.Iterate(); it.Next(&k, &s); {
			counted += s.N
		}
		if counted != tc.counted {
			t.Fatalf("%s: the slots count %d requests, want %d", tc.name, counted, tc.counted)
		}
	}
}
