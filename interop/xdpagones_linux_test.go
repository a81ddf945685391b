package interop

import (
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/agones/agonestest"
	"github.com/queryd/queryd/internal/netnstest"
)

// agonesStaleAfter is [feed] stale_after in TestXDPAgones.
const agonesStaleAfter = 2 * time.Second

// TestXDPAgones: with [agones] and [xdp], the XDP program answers the
// GameServer's state and follows its class as the sockets do: Agones'
// real SDK server (in the server's namespace) says Shutdown, and within a
// second nothing is answered, the program counting its drops as stale
// (a class change alone changes no snapshot: the daemon tells the program
// at once); a new GameServer file, Ready, is answered by the program
// again; the SDK server killed, nothing is answered from stale_after on
// (reason agones). The status page (headless Chromium) shows the banner's
// reason and the Agones card.
func TestXDPAgones(t *testing.T) {
	n := netnstest.New(t)
	sdk := agonestest.New(t, agonestest.GameServerYAML("Ready", "My Agones Server", "lobby"))
	sdk.Wrap = []string{"ip", "netns", "exec", n.ServerNS}
	sdk.Client = netnstest.HTTPClient(n.ServerNS, 2*time.Second)
	sdk.Run()
	front := StartDaemon(t, Options{
		Netns:   n.ServerNS,
		UDPAddr: xdpUDP.String(),
		Protocols: map[string]map[string]any{
			"a2s":      nil,
			"gamespy4": {"hostport": gs4HostPort, "hostip": "127.0.0.1"},
			"quake3":   {"gamename": "interop", "protocol": 84, "packet_burst": 1000, "packet_rate": 1000},
		},
		Tables: map[string]map[string]any{
			"feed":   {"stale_after": agonesStaleAfter.String()},
			"agones": {"sdk": sdk.Addr(), "timeout": "500ms"},
			"xdp":    {"interfaces": []string{n.ServerIf}, "mode": "native"},
		},
	})
	probe := newXDPProbe(t, n)
	probe.waitA2S(t, "My Agones Server")
	probe.waitQ3(t, "My Agones Server")
	if front.Metric(t, `queryd_xdp_requests_total{outcome="answered",protocol="a2s",server="main"}`) == 0 {
		t.Fatal("the program answered no A2S_INFO: the fast path is not in the way")
	}
	stale := func() float64 {
		return front.Metric(t, `queryd_xdp_requests_total{outcome="stale",protocol="a2s",server="main"}`)
	}
	before := stale()

	answered := func() float64 {
		return front.Metric(t, `queryd_xdp_requests_total{outcome="answered",protocol="a2s",server="main"}`)
	}
	begin := time.Now()
	sdk.Call("POST", "/shutdown", `{}`)
	last := untilNoAnswer(t, probe, begin, time.Second, "Shutdown")
	t.Logf("Shutdown: the last answer %v after the SDK call", last.Round(time.Millisecond))
	probe.silentFor(t, "after Shutdown", time.Second)
	if stale() == before {
		t.Error("the program counted no stale drop after Shutdown: the socket path, not the program, went silent")
	}
	waitSilentReason(t, front, "agones_stopped")
	t.Run("page", func(t *testing.T) { // the status page says why, and shows the Agones card
		page := openPageAt(t, front.AdminAddr, n.ServerNS)
		const banner = `document.getElementById("silent-banner")`
		page.waitJS(t, 5*time.Second, `!`+banner+`.hidden`)
		text := eval[string](t, page, banner+`.textContent`)
		t.Logf("the banner: %q", text)
		if !strings.Contains(text, "Silent on every protocol since") || !strings.Contains(text, "the GameServer is Shutdown: it takes no players") {
			t.Errorf("the banner says %q", text)
		}
		if shown := eval[bool](t, page, `!document.getElementById("agones").hidden`); !shown {
			t.Error("the Agones card is hidden")
		}
		if state := eval[string](t, page, `document.getElementById("agones-state").textContent`); !strings.Contains(state, "Shutdown: takes no players") {
			t.Errorf("the Agones card's state: %q", state)
		}
		if sdkText := eval[string](t, page, `document.getElementById("agones-sdk").textContent`); !strings.Contains(sdkText, sdk.Addr()) {
			t.Errorf("the Agones card's SDK server: %q", sdkText)
		}
	})

	before = answered()
	begin = time.Now()
	sdk.Write(agonesgsReady("second-round"))
	probe.waitA2S(t, "second-round")
	t.Logf("Ready again: answered %v after the new file", time.Since(begin).Round(time.Millisecond))
	if answered() == before {
		t.Error("the program answered no A2S_INFO after Ready again: the socket path answered it")
	}

	sdk.Kill()
	killed := time.Now()
	last = untilNoAnswer(t, probe, killed, agonesStaleAfter+time.Second, "the SDK server killed")
	t.Logf("SDK server killed: the last answer %v later (stale_after %v, the last read up to 500 ms before the kill)", last.Round(time.Millisecond), agonesStaleAfter)
	probe.silentFor(t, "after the SDK server was killed", time.Second)
	waitSilentReason(t, front, "agones")
}

// untilNoAnswer asks until a round gets no answer and returns when since
// begin the last answer came; it fails the test when answers still come
// after limit.
func untilNoAnswer(t *testing.T, probe *xdpProbe, begin time.Time, limit time.Duration, what string) time.Duration {
	t.Helper()
	var last time.Duration
	for a := probe.anyAnswer(); a != ""; a = probe.anyAnswer() {
		last = time.Since(begin)
		if last > limit {
			t.Fatalf("%s: still answering %v later: %s", what, last.Round(time.Millisecond), a)
		}
	}
	return last
}

// agonesgsReady is the tests' GameServer, Ready, on mapName.
func agonesgsReady(mapName string) string {
	return agonestest.GameServerYAML("Ready", "My Agones Server", mapName)
}
