package daemon

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/queryd/queryd/config"
)

// The daemon's own check: a second server on an address a server of the
// process holds (the same address, or across the wildcard) is refused; the
// same server may take its own again (a restart); a stopped one releases.
func TestHoldsRefuseSecondBind(t *testing.T) {
	cfg := func(udp string) *config.Config {
		return &config.Config{Listen: config.Listen{UDP: []netip.AddrPort{netip.MustParseAddrPort(udp)}}}
	}
	var h holds
	if err := h.take("victim", cfg("127.0.0.1:37015")); err != nil {
		t.Fatal(err)
	}
	for _, udp := range []string{"127.0.0.1:37015", "0.0.0.0:37015", "[::]:37015"} {
		err := h.take("aaa", cfg(udp))
		if err == nil || !strings.Contains(err.Error(), `of the running server "victim"`) {
			t.Errorf("%s beside the victim: %v", udp, err)
		}
	}
	for _, udp := range []string{"127.0.0.2:37015", "127.0.0.1:37016", "127.0.0.1:0"} {
		if err := h.take("other"+udp, cfg(udp)); err != nil {
			t.Errorf("%s: %v", udp, err)
		}
	}
	if err := h.take("victim", cfg("127.0.0.1:37015")); err != nil {
		t.Errorf("the victim again: %v", err)
	}
	h.release("victim")
	if err := h.take("aaa", cfg("0.0.0.0:37015")); err == nil {
		t.Error("0.0.0.0 over 127.0.0.2:37015 accepted")
	}
	h.release("other127.0.0.2:37015")
	if err := h.take("aaa", cfg("0.0.0.0:37015")); err != nil {
		t.Errorf("after both released: %v", err)
	}
}
