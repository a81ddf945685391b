package hostile

import (
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestXDPDenyDaemon (issue 22 finding 5): the running daemon with the fast
// path attached and [limits] deny naming part of the spoofed range. A
// denied source gets nothing from the program (A2S_INFO, dropped there and
// counted denied) nor from the socket path (Quake 3 getinfo with a
// challenge argument, which the program passes), where nftables would not
// have stopped the program; a source outside the list is answered on both
// paths; a SIGHUP that empties the list lets the denied source through.
func TestXDPDenyDaemon(t *testing.T) {
	over := Tables{"limits": {"deny": []string{"198.18.1.0/26", "2001:db8::/32"}}, "quake3": {"packet_rate": 0}}
	x := startXDPDaemon(t, over)
	denied := spoofed(t, 5, 1)[0]
	allowed := spoofed(t, 100, 1)[0]
	fast := []byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00")
	slow := []byte("\xFF\xFF\xFF\xFFgetinfo deny-test")
	ask := func(src netip.AddrPort, req []byte) int64 {
		before, _ := x.cap.sum([]netip.AddrPort{src})
		if err := x.raw.Send(src, req); err != nil {
			t.Fatal(err)
		}
		x.cap.waitQuiet(200*time.Millisecond, 2*time.Second)
		after, _ := x.cap.sum([]netip.AddrPort{src})
		return after.n - before.n
	}
	before := x.Metrics(t)
	for _, c := range []struct {
		path string
		req  []byte
	}{{"program", fast}, {"socket path", slow}} {
		if n := ask(denied, c.req); n != 0 {
			t.Errorf("%s: the denied source %v got %d replies", c.path, denied.Addr(), n)
		}
		if n := ask(allowed, c.req); n != 1 {
			t.Errorf("%s: the source %v outside the list got %d replies, want 1", c.path, allowed.Addr(), n)
		}
	}
	delta := x.Metrics(t).Sub(before)
	if got := delta.Sum("queryd_xdp_requests_total", "protocol", "a2s", "outcome", "denied"); got != 1 {
		t.Errorf("the program counted %v denied A2S_INFO, want 1", got)
	}
	if got := delta.Sum("queryd_requests_total", "protocol", "quake3", "outcome", "denied"); got != 1 {
		t.Errorf("the socket path counted %v denied getinfo, want 1", got)
	}
	if got := delta.Sum("queryd_requests_total", "protocol", "a2s", "outcome", "denied"); got != 1 {
		t.Errorf("queryd_requests_total counted %v denied A2S_INFO (the program's), want 1", got)
	}

	x.WriteConfig(t, baseTables(), Tables{"limits": {"deny": []string{}}, "quake3": {"packet_rate": 0}})
	reloads := strings.Count(x.Output(), "SIGHUP")
	x.Signal(t, syscall.SIGHUP)
	if !waitFor(3*time.Second, func() bool { return strings.Count(x.Output(), "SIGHUP") > reloads }) {
		t.Fatalf("no SIGHUP in the log within 3 s:\n%s", x.Output())
	}
	for _, req := range [][]byte{fast, slow} {
		ok := waitFor(3*time.Second, func() bool { return ask(denied, req) == 1 })
		if !ok {
			t.Errorf("after a SIGHUP emptied [limits] deny, % x from %v is still not answered", req[:8], denied.Addr())
		}
	}
}
