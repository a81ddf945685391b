//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"testing"

	"github.com/queryd/queryd/bedrock"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/quake3"
	"github.com/queryd/queryd/responder"
)

// TestXDPPacketRateIsQuake3s: the per-source packet rate the program
// applies to Quake 3 is [quake3]'s, in whatever order the protocols come,
// and Bedrock's is its own beside it (Bedrock's used to replace Quake 3's:
// with [quake3] packet_rate = 0 the program limited Quake 3 to Bedrock's
// 2/s, and with both on the last one listed won).
func TestXDPPacketRateIsQuake3s(t *testing.T) {
	const second = uint64(1e9)
	for _, c := range []struct {
		name          string
		rate          float64 // [quake3] packet_rate as the module builds it (-1: off)
		burst         int
		wantCost, tau uint64
	}{
		{"quake3 off", -1, 0, 0, 0},
		{"quake3 1/s, burst 10", 1, 10, second, 10 * second},
		{"quake3 4/s, burst 3", 4, 3, second / 4, 3 * second / 4},
	} {
		q3 := quake3.NewHandler(quake3.Config{}, c.rate, c.burst)
		mbe := bedrock.NewHandler(bedrock.Config{}, 2, 10)
		for _, ps := range [][]module.Protocol{{q3, mbe}, {mbe, q3}} {
			f := &FastPath{ncpu: 2}
			s := &server{}
			l := responder.DefaultLimits
			s.limits.Store(&l)
			s.protos.Store(&ps)
			var cfg querydConfig
			f.setBudgets(s, &cfg)
			if cfg.Q3Cost != c.wantCost || cfg.Q3Tau != c.tau {
				t.Errorf("%s, %s first: cost %d ns, tau %d ns; want %d, %d", c.name, ps[0].Name(), cfg.Q3Cost, cfg.Q3Tau, c.wantCost, c.tau)
			}
			if cfg.BedrockCost != second/2 || cfg.BedrockTau != 5*second {
				t.Errorf("%s, %s first: Bedrock's cost %d ns, tau %d ns; want its own 2/s after 10", c.name, ps[0].Name(), cfg.BedrockCost, cfg.BedrockTau)
			}
		}
	}
}

// TestXDPSlotsCoverSQP: the program has a reply slot for every SQP chunks
// byte the module names (module.FastSQPChunks), each its own.
func TestXDPSlotsCoverSQP(t *testing.T) {
	if n := int(querydSlotSLOT_SQP_QUERY_LAST-querydSlotSLOT_SQP_QUERY) + 1; n != module.FastSQPChunks {
		t.Fatalf("the program has %d SQP query slots, the module names %d", n, module.FastSQPChunks)
	}
	seen := map[querydSlot]module.FastQuery{}
	for q, s := range slotOf {
		if other, dup := seen[s]; dup || int(s) >= numSlots {
			t.Fatalf("slot %d: %q and %q (or past NSLOTS %d)", s, q, other, numSlots)
		}
		seen[s] = q
	}
	if len(seen) != numSlots {
		t.Fatalf("%d of the program's %d slots have a fast query", len(seen), numSlots)
	}
}
