package hostile

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/testkit"
)

// feedHTTPCap is http_max_conns in these tests (small, so that holding the
// cap is cheap).
const feedHTTPCap = 8

const hostileFeedToken = "hostile-feed-token-0123456789abcdef"

// startFeedHTTP runs a daemon with the HTTP feed on a free port, the cap
// above and a 1 s line_timeout, and returns it with the feed's address.
func startFeedHTTP(t *testing.T) (*Daemon, string) {
	t.Helper()
	dir := t.TempDir()
	tok := filepath.Join(dir, "feed.token")
	if err := os.WriteFile(tok, []byte(hostileFeedToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := testkit.FreeTCPAddr(t)
	d := StartDaemon(t, Tables{"feed": {"http": addr, "http_token_file": tok, "http_max_conns": feedHTTPCap, "line_timeout": "1s"}})
	return d, addr
}

// feedPatch is the game server's request: a new connection, a PATCH with
// the token; it returns the status code (0 when the request failed).
func feedPatch(addr, tok, name string) (int, error) {
	req, _ := http.NewRequest("PATCH", "http://"+addr+"/v1/state", strings.NewReader(fmt.Sprintf(`{"name":%q}`, name)))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/merge-patch+json")
	req.Close = true
	res, err := (&http.Client{Timeout: 2 * time.Second}).Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, nil
}

// TestFeedHTTPConnHold: a local process holds connections against the HTTP
// feed's cap. Idle ones (nothing sent, or headers never finished) are shed
// as new ones come, so the game server's patch gets through at once; busy
// ones (a body never finished) fill the cap, so a new connection gets a 503
// until line_timeout closes them, and then the patch gets through. The
// feed socket is untouched throughout, and the closes are counted.
func TestFeedHTTPConnHold(t *testing.T) {
	d, addr := startFeedHTTP(t)

	idle := openConns(t, addr, 200, false, 20*time.Second)
	defer idle.Close()
	held := idle.held()
	start := time.Now()
	code, err := feedPatch(addr, hostileFeedToken, "through the idle hold")
	took := time.Since(start)
	if code != 200 {
		t.Fatalf("the game server's patch while 200 idle connections are held: %d %v", code, err)
	}
	if held > feedHTTPCap {
		t.Errorf("queryd holds %d idle connections, want at most http_max_conns = %d", held, feedHTTPCap)
	}
	t.Logf("200 idle connections: %d still held by queryd (cap %d); the patch answered in %v", held, feedHTTPCap, took.Round(time.Millisecond))
	idle.Close()

	// Busy: headers done, a body of 100 bytes promised and never sent.
	var busy []net.Conn
	defer func() {
		for _, c := range busy {
			c.Close()
		}
	}()
	for i := 0; i < feedHTTPCap; i++ {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		busy = append(busy, c)
		fmt.Fprintf(c, "PUT /v1/state HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Length: 100\r\n\r\n{", hostileFeedToken)
		time.Sleep(50 * time.Millisecond) // its headers read (busy) before the next comes: a new one sheds only idle ones
	}
	time.Sleep(200 * time.Millisecond)
	refused := 0
	start = time.Now()
	for {
		code, _ := feedPatch(addr, hostileFeedToken, "after the busy hold")
		if code == 200 {
			break
		}
		if code == 503 {
			refused++
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the patch still refused %v after the busy hold began (line_timeout 1s)", time.Since(start))
		}
		time.Sleep(100 * time.Millisecond)
	}
	took = time.Since(start)
	t.Logf("%d busy connections: %d patches refused with a 503, then answered %v later", feedHTTPCap, refused, took.Round(time.Millisecond))
	if refused == 0 {
		t.Errorf("no 503 while %d busy connections held the cap", feedHTTPCap)
	}
	reconnect := gameReconnect(t, d, "feed socket after the HTTP hold")
	m := d.Metrics(t)
	t.Logf("queryd: closed %v idle, %v over the cap; feed socket patch in %v",
		m.Sum("queryd_feed_http_closed_total", "reason", "idle"), m.Sum("queryd_feed_http_closed_total", "reason", "over_cap"), reconnect.Round(time.Millisecond))
	if m.Sum("queryd_feed_http_closed_total", "reason", "idle") < 100 || m.Sum("queryd_feed_http_closed_total", "reason", "over_cap") < float64(refused) {
		t.Errorf("closes not counted: %v idle, %v over_cap", m.Sum("queryd_feed_http_closed_total", "reason", "idle"), m.Sum("queryd_feed_http_closed_total", "reason", "over_cap"))
	}
}

// TestFeedHTTPWrongTokens: 500 requests with wrong or missing tokens are
// each answered 401 and change nothing; the game server's token still works.
func TestFeedHTTPWrongTokens(t *testing.T) {
	t.Parallel() // a daemon of its own; it waits on timers and slow clients, not the CPU
	d, addr := startFeedHTTP(t)
	for i := 0; i < 500; i++ {
		tok := fmt.Sprintf("guess-%032d", i)
		if i%5 == 0 {
			tok = ""
		}
		if code, err := feedPatch(addr, tok, "intruder"); code != 401 {
			t.Fatalf("request %d with token %q: %d %v", i, tok, code, err)
		}
	}
	if code, err := feedPatch(addr, hostileFeedToken, "the game server"); code != 200 {
		t.Fatalf("the right token after the guesses: %d %v", code, err)
	}
	m := d.Metrics(t)
	if n := m.Sum("queryd_feed_http_responses_total", "code", "401"); n != 500 {
		t.Errorf("queryd_feed_http_responses_total{code=401} = %v, want 500", n)
	}
	if v := m.Sum("queryd_state_version"); v != 2 { // [server], then the one patch
		t.Errorf("state version %v after 500 refused requests and one patch, want 2", v)
	}
}
