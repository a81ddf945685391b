package hostile

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/internal/testkit"
)

// saglHTTPCap is [sagl] http_max_conns's default: the tests run with it.
const saglHTTPCap = 256

// httpConnsSize is how many connections the HTTP flood opens: 1,500 (CI),
// or the 5,000 with -hostile.full.
func httpConnsSize() int {
	if *flagFull {
		return 5000
	}
	return 1500
}

// attack is a set of connections an outsider holds to the SAGL HTTP port.
type attack struct {
	conns    []net.Conn
	answered int // a 200 to the one request sent (keep-alive attack)
	refused  int // a 503, an error or a close before an answer
}

// Close closes every connection.
func (a *attack) Close() {
	for _, c := range a.conns {
		c.Close()
	}
}

// openConns dials n connections to addr, 32 at a time, within limit. With
// request, each sends one GET / and reads the answer before it is left idle
// (a keep-alive connection); without, it sends nothing.
func openConns(t testing.TB, addr string, n int, request bool, limit time.Duration) *attack {
	t.Helper()
	a := &attack{}
	var mu sync.Mutex
	var next atomic.Int64
	deadline := time.Now().Add(limit)
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) && time.Now().Before(deadline) {
				c, err := net.DialTimeout("tcp", addr, 2*time.Second)
				if err != nil {
					mu.Lock()
					a.refused++
					mu.Unlock()
					continue
				}
				ok := true
				if request {
					ok = keepAliveGet(c)
				}
				mu.Lock()
				a.conns = append(a.conns, c)
				switch {
				case request && ok:
					a.answered++
				case request:
					a.refused++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(a.conns)+a.refused < n {
		t.Logf("only %d of %d connections dialled within %v", len(a.conns)+a.refused, n, limit)
	}
	return a
}

// keepAliveGet sends GET / on c and reads a 200 answer, leaving c open.
func keepAliveGet(c net.Conn) bool {
	c.SetDeadline(time.Now().Add(3 * time.Second))
	defer c.SetDeadline(time.Time{})
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: queryd\r\n\r\n"); err != nil {
		return false
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode == 200
}

// held returns how many of the connections the daemon still holds open: a
// read waits (times out) on an open one and ends in EOF or a reset on one
// the daemon closed.
func (a *attack) held() int {
	var open atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(300 * time.Millisecond)
	for _, c := range a.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.SetReadDeadline(deadline)
			var b [512]byte
			for {
				_, err := c.Read(b[:])
				if err == nil {
					continue // a 503 before the close
				}
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					open.Add(1)
				}
				return
			}
		}()
	}
	wg.Wait()
	return int(open.Load())
}

// legitGet is a browser's request: a new connection, GET /, within 2 s.
func legitGet(t testing.TB, httpAddr string) time.Duration {
	t.Helper()
	start := time.Now()
	code, body, err := httpGet(httpAddr, "/")
	took := time.Since(start)
	if err != nil || code != 200 || len(body) == 0 {
		t.Errorf("a legitimate GET / during the attack: %d, %d bytes, %v after %v", code, len(body), err, took.Round(time.Millisecond))
	}
	return took
}

// gameReconnect is the game server reconnecting: a new feed connection
// whose patch must be answered within 2 s.
func gameReconnect(t testing.TB, d *Daemon, name string) time.Duration {
	t.Helper()
	start := time.Now()
	c, err := feed.Dial(d.Socket)
	if err != nil {
		t.Errorf("the game server reconnecting: %v", err)
		return time.Since(start)
	}
	defer c.Close()
	c.Timeout = 2 * time.Second
	if _, err := c.Patch(map[string]any{"name": name}); err != nil {
		t.Errorf("the game server reconnecting: its patch: %v after %v", err, time.Since(start).Round(time.Millisecond))
	}
	return time.Since(start)
}

// TestSAGLHTTPConnFlood (finding 11): an outsider opens thousands of
// keep-alive connections to the SAGL HTTP port (one GET each, then idle)
// and holds them. queryd holds at most http_max_conns of them (it used to
// hold every one for the 60 s idle timeout), its memory stays bounded, and
// a legitimate GET and a feed reconnect are answered within 2 s.
func TestSAGLHTTPConnFlood(t *testing.T) {
	skipShort(t, "a connection flood")
	n := httpConnsSize()
	httpAddr := testkit.FreeTCPAddr(t)
	d := StartDaemon(t, Tables{"sagl": {"http": httpAddr}})
	legitGet(t, httpAddr)
	d.Metrics(t)
	rssBase, _ := d.RSS(t)

	start := time.Now()
	a := openConns(t, httpAddr, n, true, 30*time.Second)
	defer a.Close()
	openTime := time.Since(start)
	rssAttack, peak := d.RSS(t)
	held := a.held()
	legit := legitGet(t, httpAddr)
	reconnect := gameReconnect(t, d, "after the HTTP flood")
	expectNameEverywhere(t, d, httpAddr, "after the HTTP flood")
	m := d.Metrics(t)

	t.Logf("%d keep-alive connections in %v: %d answered, %d refused or closed before an answer; %d still held by queryd (cap %d)",
		len(a.conns)+a.refused, openTime.Round(time.Millisecond), a.answered, a.refused, held, saglHTTPCap)
	t.Logf("queryd: %v connections open, closed: %v idle (shed), %v over the cap; open fds %v",
		m.Sum("queryd_sagl_http_connections"), m.Sum("queryd_sagl_http_closed_total", "reason", "idle"),
		m.Sum("queryd_sagl_http_closed_total", "reason", "over_cap"), m.Sum("process_open_fds"))
	t.Logf("RSS %.1f MiB before, %.1f MiB with the connections held (+%.1f MiB), peak %.1f MiB",
		mib(rssBase), mib(rssAttack), mib(rssAttack-rssBase), mib(peak))
	t.Logf("legitimate GET / answered in %v; feed reconnect and patch in %v", legit.Round(time.Millisecond), reconnect.Round(time.Millisecond))
	if held > saglHTTPCap {
		t.Errorf("queryd holds %d of the %d connections, want at most http_max_conns = %d", held, len(a.conns), saglHTTPCap)
	}
	if len(a.conns) < n*9/10 {
		t.Errorf("only %d of %d connections were opened: the attack did not happen", len(a.conns), n)
	}
	if bound := httpRSSBound(); rssAttack-rssBase > bound {
		t.Errorf("RSS grew by %.1f MiB under the flood, want at most %.0f MiB", mib(rssAttack-rssBase), mib(bound))
	}
	if reconnect > 2*time.Second || legit > 2*time.Second {
		t.Errorf("legitimate GET %v, feed reconnect %v: want each within 2 s", legit, reconnect)
	}
}

// httpRSSBound is the RSS growth allowed while the HTTP flood is held:
// http_max_conns connections of at most ~64 KiB each (goroutine stack,
// bufio buffers, the connection) plus the Go heap's slack, four times that
// under the race detector's shadow memory.
func httpRSSBound() int64 {
	b := int64(24 << 20)
	if *flagRace && *flagBin == "" {
		b *= 4
	}
	return b
}

// TestHTTPDescriptorExhaustion (finding 1a): under a descriptor limit of
// 1,024, an outsider holds 1,100 idle TCP connections to the SAGL HTTP port
// while the game server reconnects. queryd used to accept HTTP connections
// until it ran out of descriptors, and the feed's accept then failed with
// EMFILE and its loop ended for good; now the HTTP connections are capped
// well below the limit, the reconnect is answered at once, and a
// legitimate GET gets through.
func TestHTTPDescriptorExhaustion(t *testing.T) {
	skipShort(t, "1,100 connections at a 1,024-descriptor limit")
	const limit, n = 1024, 1100
	httpAddr := testkit.FreeTCPAddr(t)
	d := StartDaemon(t, Tables{"sagl": {"http": httpAddr}})
	if err := setNoFile(d.Pid(), limit); err != nil {
		t.Skipf("cannot lower the daemon's RLIMIT_NOFILE: %v", err)
	}
	game := feedWithin(t, d)
	patchNow(t, game, "the game server's first patch", map[string]any{"name": "before the attack"})
	fdsBase := d.Metrics(t).Sum("process_open_fds")

	a := openConns(t, httpAddr, n, false, 10*time.Second)
	defer a.Close()
	time.Sleep(time.Second) // the outsider holds them for a second
	game.Close()
	reconnect := gameReconnect(t, d, "reconnected under attack")
	legit := legitGet(t, httpAddr)
	held := a.held()
	m := d.Metrics(t)
	t.Logf("RLIMIT_NOFILE %d; %d idle connections held for 1 s: queryd holds %d (cap %d), open fds %v (%v before), accept retries %v",
		limit, len(a.conns), held, saglHTTPCap, m.Sum("process_open_fds"), fdsBase, m.Sum("queryd_sagl_http_accept_retries_total"))
	t.Logf("under attack: feed reconnect and patch in %v, legitimate GET / in %v", reconnect.Round(time.Millisecond), legit.Round(time.Millisecond))
	if held > saglHTTPCap {
		t.Errorf("queryd holds %d idle connections, want at most %d", held, saglHTTPCap)
	}
	a.Close()
	after := gameReconnect(t, d, "reconnected after the attack")
	t.Logf("after the attack: feed reconnect and patch in %v", after.Round(time.Millisecond))
	expectNameEverywhere(t, d, httpAddr, "reconnected after the attack")
}
