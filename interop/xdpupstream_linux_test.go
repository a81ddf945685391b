package interop

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/netnstest"
)

// upstreamStaleAfter is [feed] stale_after in TestXDPUpstreamStale.
const upstreamStaleAfter = 2 * time.Second

// xdpFrontOptions are a front with [upstream] in front of back and the
// fast path attached to the test network's server end: no feeder at all
// (the normal front deployment).
func xdpFrontOptions(n *netnstest.Net, back *Daemon) Options {
	return Options{
		Netns:   n.ServerNS,
		UDPAddr: xdpUDP.String(),
		Protocols: map[string]map[string]any{
			"a2s":      nil,
			"gamespy4": {"hostport": gs4HostPort, "hostip": "127.0.0.1"},
			"quake3":   {"gamename": "interop", "protocol": 84, "packet_burst": 1000, "packet_rate": 1000},
		},
		Tables: map[string]map[string]any{
			"feed":     {"stale_after": upstreamStaleAfter.String()},
			"upstream": {"protocol": "a2s", "address": back.UDPAddr, "interval": "250ms", "timeout": "200ms"},
			"xdp":      {"interfaces": []string{n.ServerIf}, "mode": "native"},
		},
	}
}

// anyAnswer asks A2S_INFO (and its challenge), the GameSpy4 handshake and
// Quake 3 getinfo once each and names the first that got a reply ("":
// none did).
func (p *xdpProbe) anyAnswer() string {
	for _, q := range []struct {
		name string
		req  []byte
	}{
		{"A2S_INFO", []byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00")},
		{"GameSpy4 handshake", []byte{0xFE, 0xFD, 0x09, 1, 2, 3, 4}},
		{"Quake 3 getinfo", []byte("\xFF\xFF\xFF\xFFgetinfo")},
	} {
		if r := p.ask(q.req); r != nil {
			return fmt.Sprintf("%s: %q", q.name, r)
		}
	}
	return ""
}

// silentFor fails t if anything is answered during d.
func (p *xdpProbe) silentFor(t *testing.T, what string, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); {
		if a := p.anyAnswer(); a != "" {
			t.Fatalf("%s: answered %s", what, a)
		}
	}
}

// statusJSON reads the daemon's /status.json from inside its namespace.
func statusJSON(t *testing.T, d *Daemon) map[string]any {
	t.Helper()
	res, err := d.HTTPClient(2 * time.Second).Get("http://" + d.AdminAddr + "/status.json")
	if err != nil {
		t.Fatalf("GET /status.json: %v", err)
	}
	defer res.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// waitSilentReason waits up to 3 s (the page's document is made once a
// second) for /status.json to say silent with reason, /healthz to answer
// 503 with it and queryd_silent to be 1.
func waitSilentReason(t *testing.T, d *Daemon, reason string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		doc := statusJSON(t, d)
		s, _ := doc["silent"].(map[string]any)
		if s["silent"] == true && s["reason"] == reason {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/status.json silent: %v, want silent with reason %q", s, reason)
		}
		time.Sleep(100 * time.Millisecond)
	}
	res, err := d.HTTPClient(2 * time.Second).Get("http://" + d.AdminAddr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	json.NewDecoder(res.Body).Decode(&h)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || h["reason"] != reason {
		t.Errorf("/healthz: %d %v, want 503 with reason %q", res.StatusCode, h, reason)
	}
	if v := d.Metric(t, `queryd_silent{server="main"}`); v != 1 {
		t.Errorf("queryd_silent = %v, want 1", v)
	}
	return statusJSON(t, d)
}

// TestXDPUpstreamStale (issue 22 finding 4): with [upstream] and [xdp] (a
// front with no feeder), the game server (a stock A2S server: a queryd
// answering A2S only) killed, the XDP program fell silent never: its
// deadline read the feed's last message only, so it served the dead
// server's last state forever, and after a restart with the game server
// still down, [server]'s. Now the program reads the daemon's one silence
// value: within stale_after + 1 s of the kill nothing is answered (the
// program counts its drops as stale), /status.json says silent with
// reason "upstream", /healthz 503, queryd_silent 1, and the status page
// shows the banner naming the game server. After a restart of the front
// with the game server still down, nothing is answered from the start
// ("upstream_unanswered").
func TestXDPUpstreamStale(t *testing.T) {
	n := netnstest.New(t)
	back := StartDaemon(t, Options{Netns: n.ServerNS, Protocols: map[string]map[string]any{"a2s": nil},
		Server: map[string]any{"name": "stock server", "map": "de_dust2", "max_players": 16}})
	front := StartDaemon(t, xdpFrontOptions(n, back))
	probe := newXDPProbe(t, n)
	probe.waitA2S(t, "stock server")
	probe.waitQ3(t, "stock server")
	answered := front.Metric(t, `queryd_xdp_requests_total{outcome="answered",protocol="a2s",server="main"}`)
	if answered == 0 {
		t.Fatal("the program answered no A2S_INFO: the fast path is not in the way")
	}
	staleBefore := front.Metric(t, `queryd_xdp_requests_total{outcome="stale",protocol="a2s",server="main"}`)

	killed := time.Now()
	back.Stop() // the game server dies
	for a := probe.anyAnswer(); a != ""; a = probe.anyAnswer() {
		if time.Since(killed) > upstreamStaleAfter+time.Second {
			t.Fatalf("still answering %v after the game server died (stale_after %v): %s", time.Since(killed).Round(time.Millisecond), upstreamStaleAfter, a)
		}
	}
	silentAfter := time.Since(killed)
	probe.silentFor(t, "after the game server died", 2*time.Second)
	stale := front.Metric(t, `queryd_xdp_requests_total{outcome="stale",protocol="a2s",server="main"}`) - staleBefore
	t.Logf("silent %v after the game server died (stale_after %v); the program dropped %v A2S queries as stale",
		silentAfter.Round(time.Millisecond), upstreamStaleAfter, stale)
	if stale == 0 {
		t.Error("the program counted no stale drop: the socket path, not the program, went silent")
	}
	doc := waitSilentReason(t, front, "upstream")
	if u, _ := doc["upstream"].(map[string]any); u == nil || u["address"] != back.UDPAddr || u["stale"] != true || u["last_answer"] == nil {
		t.Errorf("/status.json upstream: %v", doc["upstream"])
	}
	t.Run("page", func(t *testing.T) { // the browser closes before the front stops
		page := openPageAt(t, front.AdminAddr, n.ServerNS)
		const banner = `document.getElementById("silent-banner")`
		page.waitJS(t, 5*time.Second, `!`+banner+`.hidden`)
		text := eval[string](t, page, banner+`.textContent`)
		t.Logf("the banner: %q", text)
		if !strings.Contains(text, "Silent on every protocol since") || !strings.Contains(text, "the game server (a2s "+back.UDPAddr+") has not answered for") {
			t.Errorf("the banner says %q", text)
		}
		if shown := eval[bool](t, page, `!document.getElementById("upstream").hidden`); !shown {
			t.Error("the upstream card is hidden")
		}
		if state := eval[string](t, page, `document.getElementById("upstream-state").textContent`); !strings.Contains(state, "not answering") {
			t.Errorf("the upstream card's state: %q", state)
		}
	})

	front.Stop() // restart with the game server still down
	front = StartDaemon(t, xdpFrontOptions(n, back))
	probe.silentFor(t, "after a restart with the game server down", upstreamStaleAfter+time.Second)
	waitSilentReason(t, front, "upstream_unanswered")
}
