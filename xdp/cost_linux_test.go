//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"net/netip"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/queryd/queryd/responder"
)

// xdpMD is struct xdp_md, the context BPF_PROG_RUN takes.
type xdpMD struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

// TestXDPProgramCost measures the program's own time per frame (the
// kernel's BPF statistics: run time ÷ runs) on bench/xdp.sh's two loads,
// run by the kernel with BPF_PROG_RUN, one frame per call (each run gets a
// fresh copy of the frame; the reply is made and returned, not sent; live
// frames would keep the program's own reply in the recycled page), so
// that no generator shares the CPU and a loaded machine moves the figure
// far less than a flood does: spoof (A2S_INFO without a token from 200
// sources: the challenge path), token (A2S_INFO with a valid token from
// one source: the INFO reply) and shed (spoof's frames with the
// proven-source tier's gate spent: XDP_DROP). It is a measurement, run on request
// (QUERYD_XDP_COST=rounds, e.g. 20; figures in bench/README.md); it fails
// when the program did not answer every frame.
func TestXDPProgramCost(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("QUERYD_XDP_COST"))
	if runs <= 0 {
		t.Skip("a measurement: QUERYD_XDP_COST=20 runs it (20 rounds)")
	}
	runs = min(runs, 50)
	lim := responder.Limits{PerIPRate: 1 << 40, PerIPBurst: 1 << 30, UnprovenRate: 1 << 40, UnprovenBurst: 1 << 30, TrackedIPs: 65536}
	fx := newFixtureWith(t, lim, fixtureOpts{unbound: true})
	stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		t.Fatalf("BPF statistics: %v", err)
	}
	defer stats.Close()
	srvMAC := macOf(t, fx.net.srvNS, fx.net.srvIf)
	cliMAC := macOf(t, fx.net.cliNS, fx.net.cliIf)
	c := fx.dial(t, cliAddr4, srvAddr4) // the client's neighbour entry, and a token
	r := c.ask(t, a2sInfo, time.Second)
	if len(r) != 9 {
		t.Fatalf("no challenge: % x", r)
	}
	var spoof [][]byte
	for i := 10; i < 210; i++ {
		src := netip.AddrFrom4([4]byte{198, 18, 0, byte(i)})
		spoof = append(spoof, frame{dstMAC: srvMAC, srcMAC: cliMAC, src: src, dst: srvAddr4, payload: a2sInfo}.bytes())
	}
	token := [][]byte{frame{dstMAC: srvMAC, srcMAC: cliMAC, src: cliAddr4, dst: srvAddr4, payload: a2sWithToken('T', r[5:9])}.bytes()}
	prog := fx.fp.links[0].prog
	idx := fx.fp.links[0].index
	const perFrame = 100
	for _, load := range []struct {
		name    string
		frames  [][]byte
		outcome int
	}{{"spoof", spoof, oChallenged}, {"token", token, oAnswered}, {"shed", spoof, oShed}} {
		if load.name == "shed" { // the proven-source tier's gate at 1/s: spent at once
			lim.UnprovenPacketRate, lim.UnprovenPacketBurst = 1, 1
			fx.fp.SetLimits(testServer, lim)
			if err := fx.fp.syncConfig(fx.main()); err != nil {
				t.Fatal(err)
			}
		}
		var all []float64
		for range runs {
			repeat := perFrame * len(spoof) / len(load.frames)
			before := fx.count(t, pA2S, load.outcome)
			s0, err := prog.Stats()
			if err != nil {
				t.Fatal(err)
			}
			err = inNS(fx.net.srvNS, func() error {
				out := make([]byte, 2048)
				for range repeat {
					for _, b := range load.frames {
						md := xdpMD{DataEnd: uint32(len(b)), IngressIfindex: idx}
						if _, err := prog.Run(&ebpf.RunOptions{Data: b, DataOut: out, Context: md}); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatalf("BPF_PROG_RUN: %v", err)
			}
			s1, _ := prog.Stats()
			n := uint64(repeat) * uint64(len(load.frames))
			slack := uint64(0)
			if load.name == "shed" {
				slack = 4 // the first frame on each CPU takes the gate's burst of 1
			}
			if got := fx.count(t, pA2S, load.outcome) - before; got+slack < n {
				t.Fatalf("%s: the program answered %d of %d frames", load.name, got, n)
			}
			ns := float64(s1.Runtime-s0.Runtime) / float64(s1.RunCount-s0.RunCount)
			all = append(all, ns)
		}
		t.Logf("%s: program ns per frame, %d rounds of %d frames: median %.1f (min %.1f, max %.1f)", load.name, runs, perFrame*len(spoof), median(all), minOf(all), maxOf(all))
	}
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func minOf(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = min(m, x)
	}
	return m
}

func maxOf(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = max(m, x)
	}
	return m
}
