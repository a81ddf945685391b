package daemon

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"golang.org/x/time/rate"

	"github.com/queryd/queryd/daemon/status"
	"github.com/queryd/queryd/netlimit"
)

// The admin listener's per-client request rate: every client (an IPv4
// address or IPv6 /64) may make adminRate requests a second with bursts of
// adminBurst to the page, /status.json and /metrics. A status page asks
// once a second and Prometheus once a scrape. A request over the rate
// waits for its turn (at most adminMaxWait, else 429): a client asking in
// a loop is slowed to the rate instead of spinning on refusals, and while
// it waits its connection counts as idle (the listener may close it for a
// new one). /healthz is not limited: its answer costs no more than a
// refusal would, and a limit would let anyone on the probe's address (any
// local user, with the probe on loopback) make it fail.
//
// All clients together may make adminAllRate requests a second (bursts of
// adminAllBurst) to those routes, so that clients from many addresses
// cannot add up to more work than the UDP path can spare (a loopback user
// can take any of 16 million source addresses). A request over either
// rate that cannot get its turn within adminMaxWait is answered 429 only
// after adminMaxWait (its connection idle meanwhile): a client looping on
// refusals is slowed to one a second too, where immediate 429s cost as
// much as answers (10,000 a second from 32 clients of one address).
const (
	adminRate     = 5
	adminBurst    = 10
	adminAllRate  = 100
	adminAllBurst = 100
	adminMaxWait  = time.Second
	adminClients  = 1024 // clients remembered (LRU); bounds memory
)

// adminGuard is in front of the whole admin mux: it sets the security
// headers on every response, refuses a Host that is not an IP address,
// localhost or an [admin] allowed_hosts name (421: a web page that rebinds
// its own name to the admin address must not read it through an
// operator's browser), and caps each client's request rate (429; not
// /healthz's).
type adminGuard struct {
	next    http.Handler
	allowed map[string]bool // lower-case names besides IP literals and localhost
	rates   *clientRates
	shed    *netlimit.Shedder // marks a waiting request's connection idle

	refusedHost atomic.Uint64
	limited     atomic.Uint64
}

func newAdminGuard(next http.Handler, allowed []string, shed *netlimit.Shedder) *adminGuard {
	g := &adminGuard{next: next, allowed: map[string]bool{}, shed: shed}
	for _, h := range allowed {
		g.allowed[strings.ToLower(strings.TrimSuffix(h, "."))] = true
	}
	g.rates = newClientRates(adminClients, adminRate, adminBurst, adminAllRate, adminAllBurst)
	return g
}

func (g *adminGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	status.Headers(w.Header())
	c, _ := r.Context().Value(connKey{}).(*adminConn)
	if c != nil {
		g.shed.Prove(c.Conn) // its headers are in: it is no trickler
	}
	// No route reads a body: one a client declares is never waited for
	// (a GET trickling a declared body held its connection for ReadTimeout).
	defer netlimit.CloseUnread(w, r)()
	if !g.allowedHost(r.Host) {
		g.refusedHost.Add(1)
		http.Error(w, "queryd admin: use the admin address itself (an IP address, localhost or a name of [admin] allowed_hosts) as the host", http.StatusMisdirectedRequest)
		return
	}
	if r.URL.Path == "/healthz" || strings.HasPrefix(r.URL.Path, "/healthz/") {
		g.pace(c, r)
	} else if !g.wait(r) {
		g.limited.Add(1)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "queryd admin: too many requests from this address", http.StatusTooManyRequests)
		return
	}
	g.next.ServeHTTP(w, r)
}

// wait takes r's turn in its client's bucket, waiting for it when it is
// at most adminMaxWait away; false: refuse r (over the rate, or its
// connection closed while it waited).
func (g *adminGuard) wait(r *http.Request) bool {
	delay, ok := g.rates.reserve(clientOf(r.RemoteAddr), time.Now(), adminMaxWait)
	if ok && delay <= 0 {
		return true
	}
	if !ok {
		delay = adminMaxWait // refused: after the longest wait, not at once
	}
	if c, _ := r.Context().Value(connKey{}).(*adminConn); c != nil && g.shed != nil {
		defer g.shed.Waiting(c.Conn)()
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return ok
	case <-r.Context().Done():
		return false
	}
}

// connKey is the request context's key of its connection, an *adminConn
// (http.Server's ConnContext puts it there).
type connKey struct{}

// adminConn is an admin connection and when it last asked /healthz.
type adminConn struct {
	net.Conn
	lastHealthz atomic.Int64 // unix nanoseconds; 0: never
}

// healthzEvery is how often one connection may ask /healthz: a probe's
// first request on a connection, and one every few seconds, are never
// held; a client asking in a loop on a keep-alive connection is held to
// 5 a second, as the other routes are held to their rate (/healthz is
// not rate-limited by address: anyone sharing the probe's could fail it).
const healthzEvery = 200 * time.Millisecond

// pace holds a /healthz request of c until healthzEvery after c's last
// one (c idle meanwhile: it may be shed for a new connection).
func (g *adminGuard) pace(c *adminConn, r *http.Request) {
	if c == nil {
		return
	}
	now := time.Now()
	last := c.lastHealthz.Swap(now.UnixNano())
	wait := time.Duration(last + int64(healthzEvery) - now.UnixNano())
	if last == 0 || wait <= 0 {
		return
	}
	c.lastHealthz.Store(now.Add(wait).UnixNano())
	if g.shed != nil {
		defer g.shed.Waiting(c.Conn)()
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}

// allowedHost reports whether host (with or without a port) is an IP
// address, localhost or an allowed name. An empty Host (HTTP/1.0 without
// one) is allowed: no browser sends it.
func (g *adminGuard) allowedHost(host string) bool { return netlimit.HostAllowed(host, g.allowed) }

// clientOf is a request's client as the rate sees it: its IPv4 address or
// IPv6 /64.
func clientOf(remote string) netip.Prefix {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return netip.Prefix{}
	}
	a := ap.Addr().Unmap()
	if a.Is4() {
		return netip.PrefixFrom(a, 32)
	}
	p, _ := a.Prefix(64)
	return p
}

// clientRates is one token bucket per client, for the clients seen last,
// and one for all of them together.
type clientRates struct {
	mu    sync.Mutex
	lru   *simplelru.LRU[netip.Prefix, *rate.Limiter]
	all   *rate.Limiter
	rate  rate.Limit
	burst int
}

// newClientRates remembers n clients' buckets of r a second (bursts of
// burst), under one bucket of allRate a second (bursts of allBurst).
func newClientRates(n int, r float64, burst int, allRate float64, allBurst int) *clientRates {
	l, err := simplelru.NewLRU[netip.Prefix, *rate.Limiter](n, nil)
	if err != nil {
		panic(err) // n > 0: a constant
	}
	return &clientRates{lru: l, all: rate.NewLimiter(rate.Limit(allRate), allBurst), rate: rate.Limit(r), burst: burst}
}

// reserve takes one request from client's bucket and the shared one at
// now and says how long it must wait for both; false (nothing taken) when
// that is over limit.
func (c *clientRates) reserve(client netip.Prefix, now time.Time, limit time.Duration) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.lru.Get(client)
	if !ok {
		l = rate.NewLimiter(c.rate, c.burst)
		c.lru.Add(client, l)
	}
	own, all := l.ReserveN(now, 1), c.all.ReserveN(now, 1)
	d := max(own.DelayFrom(now), all.DelayFrom(now))
	if own.OK() && all.OK() && d <= limit {
		return d, true
	}
	own.CancelAt(now)
	all.CancelAt(now)
	return 0, false
}
