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
)

// The admin listener's per-client request rate: every client (an IPv4
// address or IPv6 /64) may make adminRate requests a second with bursts of
// adminBurst, and as many again to /healthz, which has a bucket of its own
// (so a client reading /status.json in a loop does not starve a health
// check from the same address). A status page asks once a second and
// Prometheus once a scrape; more gets 429.
const (
	adminRate    = 20
	adminBurst   = 40
	adminClients = 1024 // clients remembered (LRU); bounds memory
)

// adminGuard is in front of the whole admin mux: it sets the security
// headers on every response, refuses a Host that is not an IP address,
// localhost or an [admin] allowed_hosts name (421: a web page that rebinds
// its own name to the admin address must not read it through an
// operator's browser), and caps each client's request rate (429).
type adminGuard struct {
	next    http.Handler
	allowed map[string]bool // lower-case names besides IP literals and localhost
	rates   [2]*clientRates // [0]: /healthz, [1]: everything else

	refusedHost atomic.Uint64
	limited     atomic.Uint64
}

func newAdminGuard(next http.Handler, allowed []string) *adminGuard {
	g := &adminGuard{next: next, allowed: map[string]bool{}}
	for _, h := range allowed {
		g.allowed[strings.ToLower(strings.TrimSuffix(h, "."))] = true
	}
	for i := range g.rates {
		g.rates[i] = newClientRates(adminClients, adminRate, adminBurst)
	}
	return g
}

func (g *adminGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	status.Headers(w.Header())
	if !g.allowedHost(r.Host) {
		g.refusedHost.Add(1)
		http.Error(w, "queryd admin: use the admin address itself (an IP address, localhost or a name of [admin] allowed_hosts) as the host", http.StatusMisdirectedRequest)
		return
	}
	class := 1
	if r.URL.Path == "/healthz" {
		class = 0
	}
	if !g.rates[class].allow(clientOf(r.RemoteAddr), time.Now()) {
		g.limited.Add(1)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "queryd admin: too many requests from this address", http.StatusTooManyRequests)
		return
	}
	g.next.ServeHTTP(w, r)
}

// allowedHost reports whether host (with or without a port) is an IP
// address, localhost or an allowed name. An empty Host (HTTP/1.0 without
// one) is allowed: no browser sends it.
func (g *adminGuard) allowedHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" || strings.EqualFold(host, "localhost") {
		return true
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	return g.allowed[strings.ToLower(strings.TrimSuffix(host, "."))]
}

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

// clientRates is one token bucket per client, for the clients seen last.
type clientRates struct {
	mu    sync.Mutex
	lru   *simplelru.LRU[netip.Prefix, *rate.Limiter]
	rate  rate.Limit
	burst int
}

func newClientRates(n int, r float64, burst int) *clientRates {
	l, err := simplelru.NewLRU[netip.Prefix, *rate.Limiter](n, nil)
	if err != nil {
		panic(err) // n > 0: a constant
	}
	return &clientRates{lru: l, rate: rate.Limit(r), burst: burst}
}

// allow takes one request from client's bucket at now.
func (c *clientRates) allow(client netip.Prefix, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.lru.Get(client)
	if !ok {
		l = rate.NewLimiter(c.rate, c.burst)
		c.lru.Add(client, l)
	}
	return l.AllowN(now, 1)
}
