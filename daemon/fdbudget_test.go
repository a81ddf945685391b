package daemon

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

func TestFitCaps(t *testing.T) {
	relay := func(n int) fdCap { return fdCap{Key: "relay.max_sessions", N: n} }
	http := func(n int) fdCap { return fdCap{Key: "sagl.http_max_conns", N: n} }
	cases := []struct {
		name    string
		limit   int
		sockets int
		want    fdCaps
		got     fdCaps
		shrunk  bool
	}{
		{"fits", 20000, 4, fdCaps{Large: []fdCap{relay(4096), http(256)}, Fixed: 96}, fdCaps{Large: []fdCap{relay(4096), http(256)}, Fixed: 96}, false},
		{"1024: relay and http shrink", 1024, 4, fdCaps{Large: []fdCap{relay(4096), http(256)}, Fixed: 96}, fdCaps{Large: []fdCap{relay(539), http(33)}, Fixed: 96}, true},
		{"4096 relay only", 4096, 2, fdCaps{Large: []fdCap{relay(4096)}, Fixed: 96}, fdCaps{Large: []fdCap{relay(2878)}, Fixed: 96}, true},
		{"tiny limit keeps one of each", 200, 2, fdCaps{Large: []fdCap{relay(4096), http(256)}, Fixed: 96}, fdCaps{Large: []fdCap{relay(1), http(1)}, Fixed: 96}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, why := fitCaps(c.limit, c.sockets, c.want, "RLIMIT_NOFILE is test", func(n int) int { return n })
			if len(got.Large) != len(c.got.Large) || got.Fixed != c.got.Fixed {
				t.Fatalf("fitCaps(%d, %d, %+v) = %+v, want %+v", c.limit, c.sockets, c.want, got, c.got)
			}
			for i := range got.Large {
				if got.Large[i] != c.got.Large[i] {
					t.Fatalf("fitCaps(%d, %d, %+v) = %+v, want %+v", c.limit, c.sockets, c.want, got, c.got)
				}
			}
			if (why != "") != c.shrunk {
				t.Fatalf("why = %q, shrunk want %v", why, c.shrunk)
			}
			if c.shrunk && (!strings.Contains(why, "RLIMIT_NOFILE") || !strings.Contains(why, "relay.max_sessions 4096 -> ")) {
				t.Fatalf("why does not name the limit and the caps: %q", why)
			}
			budget := int(float64(c.limit-fdReserve-c.sockets) * fdShare)
			if c.limit > 1000 && got.total() > budget {
				t.Fatalf("caps total %d over the budget %d", got.total(), budget)
			}
		})
	}
}

func TestDescriptorLimit(t *testing.T) {
	n, err := descriptorLimit()
	if err != nil || n < 64 {
		t.Fatalf("descriptorLimit() = %d, %v", n, err)
	}
}

// TestFitCapsReason: the reason's numbers are true. A limit too low for
// even the fixed caps says so, with no negative budget (it said "caps
// lowered to fit -1 descriptors"); the limit it asks for keeps every
// configured cap, and one less would not; in host mode the limit asked
// for is the process's, which gives each server the share it needs.
func TestFitCapsReason(t *testing.T) {
	want := fdCaps{Large: []fdCap{{Key: "relay.max_sessions", N: 4096}}, Fixed: 128}
	same := func(n int) int { return n }
	for _, c := range []struct {
		limit, sockets int
		says           string
	}{
		{130, 4, "too low for the caps"},
		{200, 2, "too low for the caps"},
		{1024, 2, "caps lowered to fit 670 descriptors"},
	} {
		_, why := fitCaps(c.limit, c.sockets, want, "RLIMIT_NOFILE is test", same)
		var need int
		if _, err := fmt.Sscanf(why[strings.Index(why, "raise the limit to ")+len("raise the limit to "):], "%d", &need); err != nil {
			t.Fatalf("limit %d: no limit to raise to in %q", c.limit, why)
		}
		if !strings.Contains(why, c.says) || regexp.MustCompile(`-[0-9]`).MatchString(why) || !strings.Contains(why, "caps lowered") {
			t.Errorf("limit %d: %q; want %q, no negative number", c.limit, why, c.says)
		}
		if got, w := fitCaps(need, c.sockets, want, "", same); w != "" || got.total() != want.total() {
			t.Errorf("limit %d: at the limit it asks for, %d, the caps are still lowered: %s", c.limit, need, w)
		}
		if _, w := fitCaps(need-1, c.sockets, want, "", same); w == "" {
			t.Errorf("limit %d: %d, one less than the limit it asks for, keeps the caps too", c.limit, need-1)
		}
	}
	for _, n := range []int{2, 3, 256} {
		for _, share := range []int{131, 5762} {
			if got := shareOf(wholeFor(share, adminMaxConns, n), adminMaxConns, n); got != share {
				t.Errorf("%d servers: the limit for a share of %d gives a share of %d", n, share, got)
			}
		}
	}
}
