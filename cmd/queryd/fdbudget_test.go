package main

import (
	"strings"
	"testing"
)

func TestFitCaps(t *testing.T) {
	cases := []struct {
		name    string
		limit   int
		sockets int
		want    fdCaps
		got     fdCaps
		shrunk  bool
	}{
		{"fits", 20000, 4, fdCaps{Relay: 4096, HTTP: 256, Feed: 64, Admin: 32}, fdCaps{Relay: 4096, HTTP: 256, Feed: 64, Admin: 32}, false},
		{"1024: relay and http shrink", 1024, 4, fdCaps{Relay: 4096, HTTP: 256, Feed: 64, Admin: 32}, fdCaps{Relay: 539, HTTP: 33, Feed: 64, Admin: 32}, true},
		{"4096 relay only", 4096, 2, fdCaps{Relay: 4096, Feed: 64, Admin: 32}, fdCaps{Relay: 2878, Feed: 64, Admin: 32}, true},
		{"tiny limit keeps one of each", 200, 2, fdCaps{Relay: 4096, HTTP: 256, Feed: 64, Admin: 32}, fdCaps{Relay: 1, HTTP: 1, Feed: 64, Admin: 32}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, why := fitCaps(c.limit, c.sockets, c.want)
			if got != c.got {
				t.Fatalf("fitCaps(%d, %d, %+v) = %+v, want %+v", c.limit, c.sockets, c.want, got, c.got)
			}
			if (why != "") != c.shrunk {
				t.Fatalf("why = %q, shrunk want %v", why, c.shrunk)
			}
			if c.shrunk && !strings.Contains(why, "RLIMIT_NOFILE") {
				t.Fatalf("why does not name the limit: %q", why)
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
