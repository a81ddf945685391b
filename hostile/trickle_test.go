package hostile

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/testkit"
)

// trickler keeps n connections to addr, each sending head (a request's
// line and headers) and then one byte a second (a declared body, or the
// headers themselves when head does not end the headers), opening a new
// one whenever queryd closes one, until stop.
type trickler struct {
	opened atomic.Int64
	stopCh chan struct{}
	wg     sync.WaitGroup
}

func startTrickler(addr, head string, n int) *trickler {
	tr := &trickler{stopCh: make(chan struct{})}
	for range n {
		tr.wg.Add(1)
		go func() {
			defer tr.wg.Done()
			for {
				select {
				case <-tr.stopCh:
					return
				default:
				}
				c, err := net.DialTimeout("tcp", addr, time.Second)
				if err != nil {
					time.Sleep(50 * time.Millisecond)
					continue
				}
				tr.opened.Add(1)
				tr.hold(c, head)
				c.Close()
			}
		}()
	}
	return tr
}

// hold trickles on c until queryd closes it (a write or the 1-byte read
// fails) or stop.
func (tr *trickler) hold(c net.Conn, head string) {
	if _, err := io.WriteString(c, head); err != nil {
		return
	}
	gone := make(chan struct{})
	go func() { io.Copy(io.Discard, c); close(gone) }() // read whatever queryd answers, until it closes
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-tr.stopCh:
			return
		case <-gone:
			return
		case <-tick.C:
			if _, err := c.Write([]byte("x")); err != nil {
				return
			}
		}
	}
}

func (tr *trickler) stop() {
	close(tr.stopCh)
	tr.wg.Wait()
}

// TestFeedHTTPTrickle (issue 39, 3): a local process without the token
// holds every one of http_max_conns (default 16, line_timeout 10 s): half
// send whole headers and then a declared body at one byte a second, half
// their headers at one byte a second, each reopened as soon as queryd
// closes it. Before, net/http read each body for line_timeout before its
// 401 went out and busy connections were never shed: the game server's
// updates got 503 (15 of 15). Now the 401 goes out as the headers are in
// and the connection closes, and unproven tricklers are shed for new
// connections: every one of the game's patches (one a second) is
// answered 200 within a second.
func TestFeedHTTPTrickle(t *testing.T) {
	t.Parallel() // one byte a second: it waits
	if testing.Short() {
		t.Skip("a 12 s attack: -short")
	}
	dir := t.TempDir()
	tok := filepath.Join(dir, "feed.token")
	if err := os.WriteFile(tok, []byte(hostileFeedToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := testkit.FreeTCPAddr(t)
	d := StartDaemon(t, Tables{"feed": {"http": addr, "http_token_file": tok}})
	bodies := startTrickler(addr, "PUT /v1/state HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", 8)
	headers := startTrickler(addr, "PUT /v1/state HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", 8)
	time.Sleep(time.Second)
	var worst time.Duration
	ok := 0
	const patches = 12
	for i := range patches {
		start := time.Now()
		code, err := feedPatch(addr, hostileFeedToken, fmt.Sprint("patch ", i))
		took := time.Since(start)
		worst = max(worst, took)
		if code == 200 && took <= time.Second {
			ok++
		} else {
			t.Errorf("patch %d: %d %v after %v", i, code, err, took.Round(time.Millisecond))
		}
		time.Sleep(time.Second - min(took, time.Second))
	}
	bodies.stop()
	headers.stop()
	m := d.Metrics(t)
	t.Logf("16 tricklers (8 bodies, 8 headers; %d and %d connections opened): %d of %d patches answered 200 within 1 s, the slowest %v; queryd answered %v 401s, shed %v connections",
		bodies.opened.Load(), headers.opened.Load(), ok, patches, worst.Round(time.Millisecond),
		m.Sum("queryd_feed_http_responses_total", "code", "401"), m.Sum("queryd_feed_http_closed_total", "reason", "idle"))
	if bodies.opened.Load() < 16 {
		t.Errorf("the body tricklers opened %d connections: their 401s did not come at once", bodies.opened.Load())
	}
}

// TestAdminTrickle (issue 39, 4): 80 connections to the admin listener,
// GETs whose declared bodies (or headers) come at one byte a second, each
// reopened when queryd closes it. Before, they kept the listener's
// connections busy for ReadTimeout and 6 of 7 /healthz probes (a new
// connection each, the Kubernetes readiness probe's route) timed out at
// 1 s. Now no route waits for a body it does not read, and connections
// that have not finished their headers are shed for new ones: every probe
// answers within 1 s.
func TestAdminTrickle(t *testing.T) {
	t.Parallel() // one byte a second: it waits
	if testing.Short() {
		t.Skip("an 8 s attack: -short")
	}
	d := StartDaemon(t, nil)
	bodies := startTrickler(d.AdminAddr, "GET /status.json HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n", 40)
	headers := startTrickler(d.AdminAddr, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", 40)
	time.Sleep(time.Second)
	var worst time.Duration
	for range 7 {
		worst = max(worst, probeHealthz(t, d.AdminAddr, time.Second))
		time.Sleep(time.Second)
	}
	bodies.stop()
	headers.stop()
	t.Logf("80 tricklers (40 bodies, 40 headers; %d and %d connections opened): the slowest of 7 /healthz probes %v",
		bodies.opened.Load(), headers.opened.Load(), worst.Round(time.Millisecond))
	if worst > time.Second {
		t.Errorf("a probe took %v", worst)
	}
}
