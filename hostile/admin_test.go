package hostile

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queryd/queryd/daemon/status"
)

// adminRoutes are every route of the admin listener, with what a request
// from an allowed Host gets.
var adminRoutes = []struct {
	method, path string
	code         int
}{
	{"GET", "/", 200},
	{"GET", "/status.js", 200},
	{"GET", "/status.css", 200},
	{"GET", "/status.json", 200},
	{"GET", "/metrics", 200},
	{"GET", "/healthz", 200},
	{"GET", "/nothing", 404},
	{"POST", "/metrics", 405},
}

// adminRawFrom sends one request on a fresh connection from the local
// address from (a loopback address of 127/8: each its own client for the
// per-client rate) to the admin listener with the given Host (and extra
// header lines) and returns the response with its body read.
func adminRawFrom(t testing.TB, from, addr, method, path, host string, extra ...string) (*http.Response, string) {
	t.Helper()
	dialer := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := dialer.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	req := method + " " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n"
	for _, h := range extra {
		req += h + "\r\n"
	}
	if method == "POST" {
		req += "Content-Length: 0\r\n"
	}
	if _, err := io.WriteString(c, req+"\r\n"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s %s (Host %s): %v", method, path, host, err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(body)
}

// checkHeaders fails t unless res carries the admin listener's security
// headers.
func checkHeaders(t testing.TB, what string, res *http.Response) {
	t.Helper()
	h := res.Header
	if h.Get("Content-Security-Policy") != status.ContentSecurityPolicy || h.Get("X-Content-Type-Options") != "nosniff" ||
		h.Get("X-Frame-Options") != "DENY" || h.Get("Referrer-Policy") != "no-referrer" || h.Get("Cache-Control") != "no-store" {
		t.Errorf("%s: %d without the security headers: %v", what, res.StatusCode, h)
	}
}

// TestAdminHostGuard (issue 24 §4): every route of the admin listener
// (the status page and its files, /status.json, /metrics, /healthz, and
// what is not a route) refuses a foreign Host with 421 and tells it
// nothing, so a DNS-rebinding page in an operator's browser reads neither
// player names nor source addresses from /metrics (it read them with 200
// before: only / and /status.json were guarded). IP literals, localhost
// and the names of [admin] allowed_hosts are served, every response with
// the security headers; and a scrape as Prometheus sends it (Host = the
// target address, its Accept and scrape-timeout headers) gets the
// metrics.
func TestAdminHostGuard(t *testing.T) {
	t.Parallel() // a daemon of its own; it waits on timers and slow clients, not the CPU
	d := StartDaemon(t, Tables{"admin": {"allowed_hosts": []string{"status.example.org"}}})
	port := d.AdminAddr[strings.LastIndexByte(d.AdminAddr, ':')+1:]
	foreign := []string{"rebind.attacker.example", "rebind.attacker.example:" + port, "REBIND.attacker.example.",
		"127.0.0.1.nip.io", "localhost.attacker.example", "status.example.org.attacker.example"}
	allowed := []string{d.AdminAddr, "127.0.0.1", "localhost:" + port, "LOCALHOST", "[::1]:" + port,
		"status.example.org", "Status.Example.Org.:" + port}
	before := d.Metrics(t).Sum("queryd_admin_refused_total", "reason", "host")
	n := 0
	from := func() string { // a client of its own for each request: the rate is TestAdminRate's
		n++
		return fmt.Sprintf("127.0.%d.%d", 2+n/250, 1+n%250)
	}
	for _, r := range adminRoutes {
		for _, host := range foreign {
			what := fmt.Sprintf("%s %s (Host %s)", r.method, r.path, host)
			res, body := adminRawFrom(t, from(), d.AdminAddr, r.method, r.path, host)
			if res.StatusCode != http.StatusMisdirectedRequest {
				t.Errorf("%s: %d, want 421", what, res.StatusCode)
			}
			for _, leak := range []string{"queryd_", "Alice", "\"ok\"", "<html", "hostile test"} {
				if strings.Contains(body, leak) {
					t.Errorf("%s: the body tells %q: %.200s", what, leak, body)
				}
			}
			checkHeaders(t, what, res)
		}
		for _, host := range allowed {
			what := fmt.Sprintf("%s %s (Host %s)", r.method, r.path, host)
			res, _ := adminRawFrom(t, from(), d.AdminAddr, r.method, r.path, host)
			if res.StatusCode != r.code {
				t.Errorf("%s: %d, want %d", what, res.StatusCode, r.code)
			}
			checkHeaders(t, what, res)
		}
	}
	// Prometheus's own request (scrape.go: Accept with OpenMetrics first,
	// gzip, its User-Agent and timeout header; Host = the target).
	res, body := adminRawFrom(t, from(), d.AdminAddr, "GET", "/metrics", d.AdminAddr,
		"Accept: application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=0.0.4;q=0.4,*/*;q=0.1",
		"User-Agent: Prometheus/3.1.0", "X-Prometheus-Scrape-Timeout-Seconds: 10")
	if res.StatusCode != 200 || !strings.Contains(body, "queryd_requests_total") || !strings.Contains(body, "queryd_silent") {
		t.Errorf("a Prometheus scrape: %d, %d bytes", res.StatusCode, len(body))
	}
	checkHeaders(t, "a Prometheus scrape", res)
	after := d.Metrics(t).Sum("queryd_admin_refused_total", "reason", "host")
	if want := float64(len(adminRoutes) * len(foreign)); after-before != want {
		t.Errorf("queryd_admin_refused_total{reason=\"host\"} grew by %v, want %v", after-before, want)
	}
}

// TestAdminRate: each client (an address) gets 5 requests a second with
// bursts of 10 (daemon's adminRate, adminBurst). 60 requests at once from
// one address: the burst is answered at once, the next second's share
// after waiting for its turn, the rest refused with 429 (Retry-After, the
// security headers). A client asking in a loop is slowed to the rate
// (answered, not refused: it does not spin on refusals). A health check
// from the same address answers at once (/healthz is not limited) and
// another address is served.
func TestAdminRate(t *testing.T) {
	skipShort(t, "seconds of requests at the admin rates")
	d := StartDaemon(t, nil)
	const client, looper, other = "127.0.0.9", "127.0.0.11", "127.0.0.10"
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	batch := time.Now()
	for i := 0; i < 60; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, _ := adminRawFrom(t, client, d.AdminAddr, "GET", "/status.json", d.AdminAddr)
			if res.StatusCode == http.StatusTooManyRequests {
				if res.Header.Get("Retry-After") != "1" {
					t.Errorf("429 without Retry-After: 1: %v", res.Header)
				}
				checkHeaders(t, "a 429", res)
			}
			mu.Lock()
			codes[res.StatusCode]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	spread := time.Since(batch) // on a loaded machine the 60 may take a while to arrive
	t.Logf("60 requests at once from one address (in %v): %d answered, %d refused with 429", spread.Round(time.Millisecond), codes[200], codes[429])
	if codes[200] < 10 || codes[200] > 10+5+int(5*spread.Seconds())+3 || codes[429] == 0 || codes[200]+codes[429] != 60 {
		t.Errorf("60 at once: %v; want the burst (10) and about a second's rate (5) answered, the rest 429", codes)
	}
	start := time.Now()
	looped := 0
	for time.Since(start) < 2*time.Second {
		res, _ := adminRawFrom(t, looper, d.AdminAddr, "GET", "/status.json", d.AdminAddr)
		if res.StatusCode != 200 {
			t.Fatalf("a client asking in a loop: %d, want each answered after its turn", res.StatusCode)
		}
		looped++
	}
	took := time.Since(start)
	t.Logf("a client asking in a loop: %d answers in %v", looped, took.Round(time.Millisecond))
	if max := 10 + int(5*took.Seconds()) + 2; looped > max {
		t.Errorf("a client asking in a loop got %d answers in %v, want at most %d", looped, took, max)
	}
	hstart := time.Now()
	if res, _ := adminRawFrom(t, client, d.AdminAddr, "GET", "/healthz", d.AdminAddr); res.StatusCode != 200 || time.Since(hstart) > 500*time.Millisecond {
		t.Errorf("/healthz from the limited address: %d after %v, want 200 at once (not limited)", res.StatusCode, time.Since(hstart))
	}
	if res, _ := adminRawFrom(t, other, d.AdminAddr, "GET", "/status.json", d.AdminAddr); res.StatusCode != 200 {
		t.Errorf("/status.json from another address: %d, want 200", res.StatusCode)
	}
	if n := d.Metrics(t).Sum("queryd_admin_refused_total", "reason", "rate_limited"); n != float64(codes[429]) {
		t.Errorf("queryd_admin_refused_total{reason=\"rate_limited\"} = %v, want %d", n, codes[429])
	}
}
