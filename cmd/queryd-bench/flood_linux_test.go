//go:build linux

package main

import (
	"strings"
	"testing"
	"time"
)

// TestFloodOptions: the flood's options out of range are refused with
// what is wanted, before any socket is opened.
func TestFloodOptions(t *testing.T) {
	ok := floodOpts{target: "198.18.0.1:27015", duration: time.Second, threads: 1}
	for _, c := range []struct {
		name string
		edit func(*floodOpts)
		want string
	}{
		{"target outside the range", func(o *floodOpts) { o.target = "192.0.2.1:27015" }, "-target must be in"},
		{"no duration", func(o *floodOpts) { o.duration = 0 }, "-duration plus -warmup"},
		{"too long", func(o *floodOpts) { o.duration = 2 * time.Minute; o.warmup = time.Second }, "-duration plus -warmup"},
		{"no thread", func(o *floodOpts) { o.threads = 0 }, "-threads 1 to 8"},
		{"negative rate", func(o *floodOpts) { o.rate = -1 }, "-rate -1"},
		{"rate too high", func(o *floodOpts) { o.rate = 20_000_000 }, "-rate 20000000"},
	} {
		o := ok
		c.edit(&o)
		_, err := flood(o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}
