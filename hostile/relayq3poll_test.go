package hostile

import (
	"bytes"
	"encoding/json"
	"net"
	"net/netip"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// q3PollVariants are what each of the 40 addresses of
// TestRelayQuake3PollKept sends once a second: getstatus and getinfo
// spelled as ioquake3's own parser reads them (Cmd_TokenizeString: leading
// whitespace, quotes) but a first-bytes claim does not, and getchallenge,
// game traffic the relay passes by design. ioquake3 answers all four from
// one global bucket (a burst of 10, then one per 100 ms), which its
// [upstream] poll needs too.
var q3PollVariants = []string{
	"\xFF\xFF\xFF\xFF getstatus",
	"\xFF\xFF\xFF\xFF\tgetinfo",
	"\xFF\xFF\xFF\xFF\"getstatus\"",
	"\xFF\xFF\xFF\xFFgetchallenge",
}

// qstatOnline runs qstat (-q3s) against addr and reports whether it saw the
// server online on map oa_dm1 (qstat exits 0 even when nothing answers).
func qstatOnline(addr string) bool {
	out, err := exec.Command("quakestat", "-q3s", addr, "-json", "-nnx", "-timeout", "2").Output()
	if err != nil {
		return false
	}
	var servers []struct {
		Status string `json:"status"`
		Map    string `json:"map"`
	}
	return json.Unmarshal(out, &servers) == nil && len(servers) == 1 && servers[0].Status == "online" && servers[0].Map == "oa_dm1"
}

// askChallengeTries asks getchallenge from a fresh player address up to
// tries times, a second apart, and returns the try that got a
// challengeResponse (0: none did).
func askChallengeTries(t *testing.T, ip net.IP, pub netip.AddrPort, tries int) int {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: ip})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 1; i <= tries; i++ {
		if askChallenge(c, pub) {
			return i
		}
	}
	return 0
}

// TestRelayQuake3PollKept is issue 39 item 6: queryd in relay mode in front
// of Debian's openarena-server (ioquake3), state from [upstream] quake3.
// 40 addresses (127.0.0.100-139) each send every variant of
// q3PollVariants once a second for 30 s. Before the fix the three query
// spellings were not claimed and went to the game server with the
// getchallenges: 160 datagrams a second on ioquake3's global bucket of 10
// a second starved the poll, queryd went stale and answered nothing (qstat
// lost the server). Now queryd answers the spellings itself and passes at
// most [quake3] pass_rate getchallenge a second (pass_source_rate per
// address): the poll keeps answering, qstat keeps seeing the server, and a
// new player's getchallenge still gets a challengeResponse.
func TestRelayQuake3PollKept(t *testing.T) {
	t.Parallel() // a real server and 30 s of a slow flood: it mostly waits
	if _, err := exec.LookPath("quakestat"); err != nil {
		t.Skip("qstat is not installed (apt-get install qstat): skipped")
	}
	game := startOpenArena(t)
	d := StartDaemon(t, Tables{
		"relay":    {"upstream": game},
		"upstream": {"protocol": "quake3", "interval": "2s", "timeout": "1s"},
		"feed":     {"stale_after": "6s"},
		"quake3":   {"enabled": true, "pass_rate": nil, "pass_source_rate": nil}, // the defaults
	})
	pub := netip.MustParseAddrPort(d.UDPAddr)
	for deadline := time.Now().Add(30 * time.Second); !qstatOnline(d.UDPAddr); time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("qstat did not see OpenArena through queryd within 30 s:\n%s", d.Output())
		}
	}

	const sources, flood = 40, 20 * time.Second
	var conns []*net.UDPConn
	for i := range sources {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, byte(100+i))})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	var sent, replies atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, c := range conns { // drain the replies: count them
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 16384)
			for {
				if _, _, err := c.ReadFromUDPAddrPort(buf); err != nil {
					return
				}
				replies.Add(1)
			}
		}()
	}
	wg.Add(1)
	go func() { // every 25 ms the next address sends the four variants: each address 4 a second
		defer wg.Done()
		tick := time.NewTicker(time.Second / sources)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			for _, v := range q3PollVariants {
				conns[i%sources].WriteToUDPAddrPort([]byte(v), pub)
				sent.Add(1)
			}
		}
	}()

	m0 := d.Metrics(t)
	start := time.Now()
	var staleSamples, samples, qstatOK, qstatRuns int
	var players []int
	for time.Since(start) < flood {
		time.Sleep(time.Second)
		samples++
		if d.Metrics(t).Sum("queryd_upstream_stale") != 0 {
			staleSamples++
		}
		if samples%5 == 0 {
			qstatRuns++
			if qstatOnline(d.UDPAddr) {
				qstatOK++
			}
		}
		if samples == 6 || samples == 14 { // two new players, in the flood's first and second half
			players = append(players, askChallengeTries(t, net.IPv4(127, 0, 0, byte(201+len(players))), pub, 5))
		}
	}
	m1 := d.Metrics(t)
	close(stop)
	for _, c := range conns {
		c.Close()
	}
	wg.Wait()

	dm := m1.Sub(m0)
	silent, answered := dm.Sum("queryd_upstream_polls_total", "outcome", "silent"), dm.Sum("queryd_upstream_polls_total", "outcome", "answered")
	up := dm.Sum("queryd_relay_packets_total", "direction", "upstream")
	q3 := dm.Sum("queryd_requests_total", "protocol", "quake3", "outcome", "answered")
	passLimited := dm.Sum("queryd_relay_dropped_total", "reason", "pass_limit")
	t.Logf("%d datagrams from %d addresses in %v (%d replies); queryd stale in %d of %d samples; polls: %.0f answered, %.0f silent; "+
		"qstat saw the server %d of %d times; players' challenge on try %v (0: none in 5); relayed upstream %.0f, pass_limit drops %.0f; quake3 answered %.0f",
		sent.Load(), sources, flood, replies.Load(), staleSamples, samples, answered, silent, qstatOK, qstatRuns, players, up, passLimited, q3)
	if staleSamples != 0 {
		t.Errorf("queryd was stale in %d of %d samples: the poll did not get through", staleSamples, samples)
	}
	if qstatOK != qstatRuns {
		t.Errorf("qstat saw the server %d of %d times", qstatOK, qstatRuns)
	}
	for i, p := range players {
		if p == 0 {
			t.Errorf("player %d got no challengeResponse in 5 tries", i+1)
		}
	}
	if most := 5 + 5*flood.Seconds() + 2*5; up > most+2 { // pass_burst + pass_rate × the flood, + the players' tries
		t.Errorf("%.0f datagrams relayed to the game server in %v: want at most %.0f (getchallenge at pass_rate)", up, flood, most)
	}
	if !bytes.Contains([]byte(d.Output()), []byte("relay mode")) {
		t.Errorf("the daemon did not start in relay mode:\n%s", d.Output())
	}
}
