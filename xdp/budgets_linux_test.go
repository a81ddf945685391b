//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"testing"
	"time"

	"github.com/queryd/queryd/bedrock"
	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/quake3"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/sqp"
)

// TestXDPPacketRateIsQuake3s: the per-source packet rate the program
// applies to Quake 3 is [quake3]'s, in whatever order the protocols come,
// and Bedrock's is its own beside it (Bedrock's used to replace Quake 3's:
// with [quake3] packet_rate = 0 the program limited Quake 3 to Bedrock's
// 2/s, and with both on the last one listed won); the other rows have none.
func TestXDPPacketRateIsQuake3s(t *testing.T) {
	const second = uint64(1e9)
	list, err := embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name          string
		rate          float64 // [quake3] packet_rate (0: off)
		burst         int
		wantCost, tau uint64
	}{
		{"quake3 off", 0, 0, 0, 0},
		{"quake3 1/s, burst 10", 1, 10, second, 10 * second},
		{"quake3 4/s, burst 3", 4, 3, second / 4, 3 * second / 4},
	} {
		q3 := quake3.NewHandler(quake3.Config{}, c.rate, c.burst)
		mbe := bedrock.NewHandler(bedrock.Config{}, 2, 10)
		for _, ps := range [][]module.Protocol{{q3, mbe}, {mbe, q3}} {
			f := &FastPath{ncpu: 2, list: list}
			s := &server{}
			l := responder.DefaultLimits
			s.limits.Store(&l)
			s.protos.Store(&ps)
			var cfg querydConfig
			f.setBudgets(s, &cfg)
			if cfg.RateCost[pQ3] != c.wantCost || cfg.RateTau[pQ3] != c.tau {
				t.Errorf("%s, %s first: cost %d ns, tau %d ns; want %d, %d", c.name, ps[0].Name(), cfg.RateCost[pQ3], cfg.RateTau[pQ3], c.wantCost, c.tau)
			}
			if cfg.RateCost[pBedrock] != second/2 || cfg.RateTau[pBedrock] != 5*second {
				t.Errorf("%s, %s first: Bedrock's cost %d ns, tau %d ns; want its own 2/s after 10", c.name, ps[0].Name(), cfg.RateCost[pBedrock], cfg.RateTau[pBedrock])
			}
			for row := range cfg.RateCost {
				if row != pQ3 && row != pBedrock && (cfg.RateCost[row] != 0 || cfg.RateTau[row] != 0) {
					t.Errorf("%s: row %d has a packet rate", c.name, row)
				}
			}
		}
	}
}

// TestXDPFastQueries: the program's list (bpf/protocols.h, read from the
// object) has a row for each protocol with the fast path capability, and
// every reply the modules hand over has a slot of its own: together they
// fill every slot of the program once (SQP's query replies one per chunks
// byte the module knows, sqp.FastChunks).
func TestXDPFastQueries(t *testing.T) {
	list, err := embedded()
	if err != nil {
		t.Fatal(err)
	}
	issuer, err := challenge.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := list.rows[pSQP].slots[sqp.FastQuery]; r.n != sqp.FastChunks {
		t.Fatalf("the program has %d SQP query slots, the module names %d", r.n, sqp.FastChunks)
	}
	filled := map[uint32]string{}
	for _, p := range testProtocols(issuer) {
		if err := list.check(p); err != nil {
			t.Fatal(err)
		}
		p.Update(testSnapshot(t))
		row, ok := list.row(p.Name())
		if !ok {
			t.Fatalf("no row for %s", p.Name())
		}
		p.(module.FastPath).FastReplies(time.Now(), func(r module.FastReply) {
			i, err := list.slot(row, r)
			if err != nil {
				t.Fatal(err)
			}
			if other, dup := filled[i]; dup {
				t.Fatalf("slot %d: %s %q and %s", i, p.Name(), r.Query, other)
			}
			filled[i] = p.Name() + " " + string(r.Query)
		})
	}
	if len(filled) != int(list.slots) {
		t.Fatalf("the modules fill %d of the program's %d slots", len(filled), list.slots)
	}
}
