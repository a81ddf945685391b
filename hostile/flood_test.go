package hostile

import (
	"flag"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/protocols"
)

var (
	flagFull      = flag.Bool("hostile.full", false, "run the full-size attacks: a flood of 1,000,000 requests from 100,000 spoofed sources, 5,000 SAGL HTTP connections")
	flagFloodRate = flag.Float64("hostile.rate", 10000, "flood: spoofed datagrams per second")
)

// floodSize is the flood's request and source counts: scaled down by
// default (CI), full size with -hostile.full.
func floodSize() (requests, sources int) {
	if *flagFull {
		return 1_000_000, 100_000
	}
	return 100_000, 50_000
}

// TestFlood sends a paced flood of every unproven request type of every
// protocol from tens of thousands of spoofed 127.x.y.z sources (a raw
// socket; loopback only) at a daemon on its default limits, while a
// legitimate A2S client queries 10 times a second from 127.0.0.1. The
// legitimate client must get at least 99 % of its answers, every datagram
// must be counted, and the daemon's memory must stay within the bound the
// per-source LRU caches set.
func TestFlood(t *testing.T) {
	testFlood(t, Tables{"listen": {"workers": testWorkers}})
}

// TestFloodURing: the same flood, the same bounds, with [listen] socket =
// "uring" (the batch layer's where this kernel refuses io_uring).
func TestFloodURing(t *testing.T) {
	testFlood(t, Tables{"listen": {"workers": testWorkers, "socket": "uring"}})
}

func testFlood(t *testing.T, tables Tables) {
	if why := rawSupported(); why != "" {
		t.Skip("flood skipped: " + why)
	}
	requests, sources := floodSize()
	// The default limits (256 KiB/s per IP, 1 MiB/s unproven, 65,536 tracked
	// IPs), two receive loops.
	d := StartDaemon(t, tables)
	dst := netip.MustParseAddrPort(d.UDPAddr)
	raw, err := newRawSender(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()

	legitQuery(t, d) // warm up: the first answers, the first scrape
	d.Metrics(t)
	rssBase, _ := d.RSS(t)
	before := d.Metrics(t)

	stop := make(chan struct{})
	var legit legitStats
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		legit.run(t, d, stop)
	}()

	reqs := unprovenRequests()
	start := time.Now()
	p := newPacer(*flagFloodRate)
	var sent, sentBytes int
	for i := 0; i < requests; i++ {
		p.Wait(i)
		src := netip.AddrPortFrom(netip.MustParseAddr(sourceIP(10+i%sources/65000, i%sources%65000)), uint16(1024+i%60000))
		r := reqs[i%len(reqs)]
		if err := raw.Send(src, r.Bytes); err != nil {
			t.Fatalf("after %d datagrams: %v", i, err)
		}
		sent++
		sentBytes += len(r.Bytes)
	}
	floodTime := time.Since(start)
	time.Sleep(300 * time.Millisecond) // let the daemon drain its socket
	close(stop)
	wg.Wait()

	rss, peak := d.RSS(t)
	delta := d.Metrics(t).Sub(before)
	elapsed := time.Since(start).Seconds() // until the scrape: the daemon may still have been draining
	counted := delta.Sum("queryd_requests_total")
	overflow := delta.Sum("queryd_socket_errors_total", "op", "overflow")
	out := delta.Sum("queryd_sent_bytes_total")
	legitDatagrams := float64(legit.datagrams.Load())
	t.Logf("flood: %d datagrams (%d B) from %d sources in %v (%.0f/s); daemon counted %.0f (+ at most %.0f legit datagrams), kernel overflow drops %.0f; replies %.0f B (%.0f B/s)",
		sent, sentBytes, min(sources, requests), floodTime.Round(time.Millisecond), float64(sent)/floodTime.Seconds(),
		counted-legitDatagrams, legitDatagrams, overflow, out, out/floodTime.Seconds())
	for _, proto := range protocols.Names() {
		in, out := delta.Sum("queryd_received_bytes_total", "protocol", proto), delta.Sum("queryd_sent_bytes_total", "protocol", proto)
		t.Logf("  %-8s outcomes %v, in %.0f B, out %.0f B (ratio %.2f)", proto, delta.Requests(proto), in, out, out/in)
		if neverAmplifies(proto) && out > in {
			t.Errorf("%s: %.0f bytes out for %.0f in under the spoofed flood", proto, out, in)
		}
	}
	t.Logf("legit client: %d of %d queries answered (%.2f %%; %d at the first try), slowest %v", legit.ok.Load(), legit.tries.Load(),
		100*legit.rate(), legit.firstTry.Load(), time.Duration(legit.slowest.Load()))
	t.Logf("RSS: %.1f MiB before, %.1f MiB after, peak %.1f MiB (growth %.1f MiB; bound %.0f MiB)",
		mib(rssBase), mib(rss), mib(peak), mib(peak-rssBase), mib(rssBound()))

	if got := counted + overflow; got < float64(sent) || got > float64(sent)+legitDatagrams {
		t.Errorf("counted %.0f datagrams + %.0f kernel drops; %d spoofed + %.0f legit were sent", counted, overflow, sent, legitDatagrams)
	}
	if legit.tries.Load() < int64(floodTime.Seconds()*4) {
		t.Errorf("the legit client made only %d queries in %v", legit.tries.Load(), floodTime)
	}
	if r := legit.rate(); r < 0.99 {
		t.Errorf("the legit client got %.2f %% answered during the flood; want ≥ 99 %%", 100*r)
	}
	if peak-rssBase > rssBound() {
		t.Errorf("RSS grew by %.1f MiB during the flood; the bound is %.0f MiB", mib(peak-rssBase), mib(rssBound()))
	}
	// The replies larger than their requests (GameSpy4 handshakes, Quake 3,
	// Bedrock pongs) draw on the global unproven budget; challenges and
	// padded pings, no larger than their requests, do not.
	amplifying := delta.Sum("queryd_sent_bytes_total", "protocol", "gamespy4") + delta.Sum("queryd_sent_bytes_total", "protocol", "quake3") +
		delta.Sum("queryd_sent_bytes_total", "protocol", "bedrock")
	limit := float64(unprovenBurstTotal(64<<10)) + float64(1<<20)*elapsed
	t.Logf("amplifying replies (GameSpy4, Quake 3, Bedrock): %.0f B (%.0f B/s) against the global unproven cap of %.0f B (1 MiB/s, burst 64 KiB) in %.2f s",
		amplifying, amplifying/elapsed, limit, elapsed)
	if amplifying > limit {
		t.Errorf("%.0f amplifying reply bytes in %.2f s; the global unproven cap allows %.0f", amplifying, elapsed, limit)
	}
	if answered := delta.Sum("queryd_requests_total", "outcome", "answered"); answered == 0 {
		t.Errorf("nothing answered during the flood: the test measured a dead daemon")
	}
}

// rssBound is the most the daemon's RSS may grow in a flood. The per-IP
// budget cache and the Quake 3 and Bedrock packet-rate caches each hold at
// most tracked_ips (65,536) sources at roughly 250 bytes each: about 48 MiB
// live, up to twice that with the Go heap's GC headroom, plus slack.
// Measured (README.md): 18.5 MiB growth for 50,000 sources, 88–94 MiB for
// 100,000 (the caches full). The race detector's shadow memory multiplies
// heap growth by four to six, hence its own bound.
func rssBound() int64 {
	if *flagRace {
		return 512 << 20
	}
	return 128 << 20
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// legitStats is what the legitimate client saw.
type legitStats struct {
	tries, ok, firstTry, datagrams, slowest atomic.Int64
}

func (l *legitStats) rate() float64 {
	if l.tries.Load() == 0 {
		return 0
	}
	return float64(l.ok.Load()) / float64(l.tries.Load())
}

// run queries A2S_INFO 10 times a second until stop, each time as a new
// client (a new socket, a fresh challenge), like a server browser: a query
// that gets no answer within 1 s is asked once more (qstat and gamedig
// retry too). firstTry counts the queries answered without the retry.
func (l *legitStats) run(t testing.TB, d *Daemon, stop chan struct{}) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		l.tries.Add(1)
		begin := time.Now()
		var err error
		for attempt := 0; attempt < 2; attempt++ {
			l.datagrams.Add(3) // at most: the request, its challenged retry, one more on a new challenge
			var name string
			name, err = l.ask(d)
			if err == nil && name != "hostile test" {
				t.Errorf("legit client: name %q", name)
			}
			if err == nil {
				if attempt == 0 {
					l.firstTry.Add(1)
				}
				break
			}
			t.Logf("legit client (attempt %d): %v", attempt+1, err)
		}
		if took := int64(time.Since(begin)); took > l.slowest.Load() {
			l.slowest.Store(took)
		}
		if err == nil {
			l.ok.Add(1)
		}
	}
}

// ask asks A2S_INFO as a new client and returns the server name.
func (l *legitStats) ask(d *Daemon) (string, error) {
	c, err := a2s.Dial(d.UDPAddr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.Timeout = time.Second
	info, err := c.Info()
	if err != nil {
		return "", err
	}
	return info.Name, nil
}

// legitQuery asks A2S_INFO once and fails the test if it is not answered.
func legitQuery(t testing.TB, d *Daemon) *a2s.Info {
	t.Helper()
	c, err := a2s.Dial(d.UDPAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Timeout = 2 * time.Second
	info, err := c.Info()
	if err != nil {
		t.Fatalf("A2S_INFO: %v", err)
	}
	return info
}

// budgetCase is one flood against one byte budget, sent through the raw
// socket from many source ports so that every receive worker is busy.
type budgetCase struct {
	name    string
	proto   string
	req     []byte
	sources int     // distinct spoofed addresses (1: one victim)
	rate    float64 // the budget under test, bytes per second
	burst   float64
}

// floodBudget runs c against d at 40,000 datagrams/s for 0.7 s and checks
// that the replies stay within burst + rate × elapsed.
func floodBudget(t *testing.T, d *Daemon, block int, c budgetCase) {
	raw, err := newRawSender(netip.MustParseAddrPort(d.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	time.Sleep(300 * time.Millisecond) // the budgets fill back up to their bursts
	before := d.Metrics(t)
	start := time.Now()
	p := newPacer(40000)
	n := 0
	for time.Since(start) < 700*time.Millisecond {
		p.Wait(n)
		src := netip.AddrPortFrom(netip.MustParseAddr(sourceIP(block, n%c.sources)), uint16(1024+n%50000))
		if err := raw.Send(src, c.req); err != nil {
			t.Fatal(err)
		}
		n++
	}
	time.Sleep(300 * time.Millisecond)
	delta := d.Metrics(t).Sub(before)
	elapsed := time.Since(start).Seconds() // after the scrape: every counted byte was sent within it
	out := delta.Sum("queryd_sent_bytes_total", "protocol", c.proto)
	limit := c.burst + c.rate*elapsed
	t.Logf("%s: %d requests in %.2f s; %.0f B of replies (%.0f B/s) for a cap of %.0f B (%.0f B/s + %.0f B burst); outcomes %v",
		c.name, n, elapsed, out, out/elapsed, limit, c.rate, c.burst, delta.Requests(c.proto))
	if out > limit {
		t.Errorf("%s: %.0f B of replies in %.2f s, over the cap of %.0f B (%.2f×)", c.name, out, elapsed, limit, out/limit)
	}
}

// TestBudgetsUnderLoad floods with every receive worker busy (many
// spoofed source ports, two workers): Quake 3 getstatus (185-byte replies)
// and GameSpy4 handshakes (16-byte replies) from 4,096 sources against the
// global unproven cap, and GameSpy4 handshakes from one spoofed victim
// address against its per-IP cap. (Before the unproven budget was split
// among the receive loops, the loops' out-of-order batch times made the
// shared limiter credit time twice: 1.1–1.5× the cap with handshakes.)
func TestBudgetsUnderLoad(t *testing.T) {
	if why := rawSupported(); why != "" {
		t.Skip("skipped: " + why)
	}
	d := StartDaemon(t, Tables{
		"listen": {"workers": testWorkers},
		"limits": {"per_ip_rate": "64MiB", "per_ip_burst": "16MiB", "unproven_rate": 128 << 10, "unproven_burst": 16 << 10},
		"quake3": {"packet_rate": 0},
	})
	burst := float64(unprovenBurstTotal(16 << 10))
	floodBudget(t, d, 20, budgetCase{"global cap, quake3 getstatus", "quake3", []byte("\xFF\xFF\xFF\xFFgetstatus"), 4096, 128 << 10, burst})
	floodBudget(t, d, 21, budgetCase{"global cap, gamespy4 handshake", "gamespy4", []byte{0xFE, 0xFD, 0x09, 1, 2, 3, 4}, 4096, 128 << 10, burst})
	d2 := StartDaemon(t, Tables{
		"listen": {"workers": testWorkers},
		"limits": {"per_ip_rate": 64 << 10, "per_ip_burst": 8 << 10, "unproven_rate": "64MiB", "unproven_burst": "16MiB"},
	})
	floodBudget(t, d2, 22, budgetCase{"per-IP cap, gamespy4 handshake, one victim", "gamespy4", []byte{0xFE, 0xFD, 0x09, 1, 2, 3, 4}, 1, 64 << 10, 8 << 10})
}

// testWorkers is the receive loops the budget tests configure: the global
// unproven budget is split evenly among them.
const testWorkers = 2

// unprovenBurstTotal is the global unproven burst the daemon really grants
// for a configured burst: each of its receive loops gets an equal share, but
// at least 1,500 bytes. TestFlood's daemon has one loop per CPU.
func unprovenBurstTotal(burst int) int {
	return testWorkers * max(burst/testWorkers, 1500)
}

// TestChallengeFloodLegit floods spoofed A2S_INFO requests, whose
// 9-byte challenge replies are smaller than the 25-byte requests (no
// amplification), at about twice the global unproven budget, while a
// legitimate client asks A2S_INFO 10 times a second as a new client each
// time. Challenges that cannot amplify should not be starved by the global
// budget: the legit client must still get ≥ 99 % answered.
func TestChallengeFloodLegit(t *testing.T) {
	if why := rawSupported(); why != "" {
		t.Skip("skipped: " + why)
	}
	const rate = 16 << 10
	d := StartDaemon(t, Tables{"limits": {"unproven_rate": rate, "unproven_burst": 4096}})
	// Before challenges were exempt from the unproven budget, this flood
	// left the legit client 57–70 % of its answers.
	raw, err := newRawSender(netip.MustParseAddrPort(d.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	stop := make(chan struct{})
	var legit legitStats
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		legit.run(t, d, stop)
	}()
	req := a2sReq('T', []byte("Source Engine Query\x00"))
	before := d.Metrics(t)
	start := time.Now()
	p := newPacer(2 * rate / 9) // challenges worth twice the budget
	for i := 0; time.Since(start) < 2*time.Second; i++ {
		p.Wait(i)
		src := netip.AddrPortFrom(netip.MustParseAddr(sourceIP(30, i%20000)), uint16(1024+i%50000))
		if err := raw.Send(src, req); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	delta := d.Metrics(t).Sub(before)
	t.Logf("spoofed A2S_INFO at %d/s (challenges worth 2× the %d B/s unproven budget): a2s outcomes %v; legit client %d of %d answered (%.1f %%; %d at the first try)",
		2*rate/9, rate, delta.Requests("a2s"), legit.ok.Load(), legit.tries.Load(), 100*legit.rate(), legit.firstTry.Load())
	if r := legit.rate(); r < 0.99 {
		t.Errorf("the legit client got %.1f %% answered: spoofed requests that cannot amplify starve real clients' challenges", 100*r)
	}
}
