package hostile

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// adminMaxConns is the admin listener's connection cap (daemon's adminMaxConns).
const adminMaxConns = 64

// holdAdmin opens n connections to the admin listener and leaves them
// idle: every other one after a keep-alive GET /healthz answered (a
// keep-alive connection between requests), the rest sending nothing (a
// connection waiting for its first request).
func holdAdmin(t testing.TB, addr string, n int) (conns []net.Conn, keptAlive int) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	jobs := make(chan int)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				c, err := net.DialTimeout("tcp", addr, 3*time.Second)
				if err != nil {
					continue
				}
				ok := false
				if i%2 == 0 {
					ok = keepAliveHealthz(c)
				}
				mu.Lock()
				conns = append(conns, c)
				if ok {
					keptAlive++
				}
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < n; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return conns, keptAlive
}

// keepAliveHealthz sends GET /healthz on c and reads the answer, leaving c
// open for the next request.
func keepAliveHealthz(c net.Conn) bool {
	c.SetDeadline(time.Now().Add(3 * time.Second))
	defer c.SetDeadline(time.Time{})
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
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

// probeHealthz is a liveness probe: a new connection, GET /healthz, the
// answer within limit; it returns how long it took.
func probeHealthz(t testing.TB, addr string, limit time.Duration) time.Duration {
	t.Helper()
	client := &http.Client{Timeout: limit, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	res, err := client.Get("http://" + addr + "/healthz")
	took := time.Since(start)
	if err != nil {
		t.Errorf("/healthz while idle connections are held: %v after %v", err, took.Round(time.Millisecond))
		return took
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("/healthz while idle connections are held: %d", res.StatusCode)
	}
	return took
}

// TestAdminIdleConnections (issue 24 §4): an outsider holding 32 idle
// keep-alive connections to the admin listener made /healthz and /metrics
// time out (the listener took 32 connections and never shed an idle one:
// a liveness probe then restarts queryd in a loop). Now, with 32 and with
// 1,000 idle connections held (half after a keep-alive request, half
// never sending one; the daemon under a descriptor limit of 512 for the
// 1,000), ten liveness probes in a row each answer within 1 s, and
// queryd holds at most its cap of the outsider's connections (and with
// as many as its cap, 64, it closes idle ones to keep a slot free).
func TestAdminIdleConnections(t *testing.T) {
	t.Parallel() // a daemon of its own; it waits on timers and slow clients, not the CPU
	skipShort(t, "up to 1,000 idle connections")
	for _, n := range []int{32, adminMaxConns, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			d := newDaemon(t, nil)
			if n > 100 {
				d.NoFile = 512
			}
			d.Start(t)
			conns, kept := holdAdmin(t, d.AdminAddr, n)
			a := &attack{conns: conns}
			defer a.Close()
			var worst time.Duration
			for i := 0; i < 10; i++ {
				worst = max(worst, probeHealthz(t, d.AdminAddr, time.Second))
			}
			held := a.held()
			m := d.Metrics(t)
			t.Logf("%d idle connections opened (%d after a keep-alive request): queryd still holds %d (cap %d), closed %v idle ones; the slowest of 10 liveness probes answered in %v",
				len(conns), kept, held, adminMaxConns, m.Sum("queryd_admin_idle_closed_total"), worst.Round(time.Microsecond))
			if len(conns) < n*9/10 {
				t.Errorf("only %d of %d connections opened: the attack did not happen", len(conns), n)
			}
			if worst > time.Second {
				t.Errorf("a liveness probe took %v, want within 1 s", worst)
			}
			if held > adminMaxConns {
				t.Errorf("queryd holds %d of the idle connections, want at most %d", held, adminMaxConns)
			}
		})
	}
}
