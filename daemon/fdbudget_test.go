package daemon

import (
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
			got, why := fitCaps(c.limit, c.sockets, c.want, "RLIMIT_NOFILE is test")
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
