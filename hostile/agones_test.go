package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
)

// badSDK stands in for the Agones SDK server at [agones] sdk: while good,
// its watch stream and GET /gameserver give a Ready GameServer named
// "good"; once bad, GET answers what is not JSON and every watch stream
// sends a garbage line, a GameServer of the wrong shape, a 10 MiB line,
// then spaces without end.
type badSDK struct {
	srv     *httptest.Server
	bad     atomic.Bool
	written atomic.Int64 // bytes of bad streams written
}

const goodGameServer = `{"object_meta":{"name":"gs","annotations":{"queryd.dev/name":"good","queryd.dev/map":"good_map"}},` +
	`"status":{"state":"Ready","lists":{"players":{"capacity":"8","values":["ann"]}}}}`

func newBadSDK(t *testing.T) *badSDK {
	h := &badSDK{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /gameserver", func(w http.ResponseWriter, r *http.Request) {
		if h.bad.Load() {
			fmt.Fprint(w, "<html>not a GameServer</html>")
			return
		}
		fmt.Fprint(w, goodGameServer)
	})
	mux.HandleFunc("GET /watch/gameserver", func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		w.WriteHeader(http.StatusOK)
		if !h.bad.Load() {
			fmt.Fprintf(w, `{"result":%s}`+"\n", goodGameServer)
			rc.Flush()
		}
		for !h.bad.Load() {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
		write := func(b []byte) bool {
			n, err := w.Write(b)
			h.written.Add(int64(n))
			return err == nil && r.Context().Err() == nil
		}
		write([]byte("garbage, not JSON\n{\"result\": 5}\n"))
		rc.Flush()
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for sent := 0; sent < 10<<20; sent += len(chunk) {
			if !write(chunk) {
				return
			}
		}
		write([]byte("\n"))
		spaces := bytes.Repeat([]byte(" "), 64<<10)
		for write(spaces) {
		}
	})
	h.srv = httptest.NewServer(mux)
	t.Cleanup(h.srv.Close)
	return h
}

// TestAgonesBadSDKServer: the SDK server at [agones] sdk goes bad
// (garbage, a GameServer of the wrong shape, a 10 MiB line, spaces without
// end on every watch stream; GET answers that are not JSON) against the
// running daemon: each is counted by reason in queryd_agones_reads_total,
// the daemon's RSS stays bounded, every protocol keeps answering the last
// good GameServer until stale_after after the last good read, then nothing
// (/healthz 503, reason agones); once the SDK server is good again queryd
// answers again without a restart.
func TestAgonesBadSDKServer(t *testing.T) {
	t.Parallel() // it waits for the poller's timeouts
	if testing.Short() {
		t.Skip("SKIP: a stand-in SDK server streaming hundreds of MiB: -short")
	}
	sdk := newBadSDK(t)
	const stale = 3 * time.Second
	d := StartDaemon(t, Tables{
		"feed":   {"stale_after": stale.String()},
		"agones": {"sdk": strings.TrimPrefix(sdk.srv.URL, "http://"), "timeout": "1s"},
	})
	ask := func(wait time.Duration) (*a2s.Info, error) {
		c, err := a2s.Dial(d.UDPAddr)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		c.Timeout = wait
		return c.Info()
	}
	if !waitFor(10*time.Second, func() bool { info, err := ask(200 * time.Millisecond); return err == nil && info.Name == "good" }) {
		t.Fatalf("the good GameServer not answered:\n%s", d.Output())
	}
	rss0, _ := d.RSS(t)
	sdk.bad.Store(true)
	turned := time.Now()
	var peak int64
	reads := func(m Metrics, source, outcome string) float64 {
		return m.Sum("queryd_agones_reads_total", "source", source, "outcome", outcome)
	}
	var silentAt time.Duration
	checkedMid := false
	for {
		if time.Since(turned) > stale+10*time.Second {
			t.Fatalf("not silent %s after the SDK server went bad (stale_after %s)", time.Since(turned), stale)
		}
		rss, _ := d.RSS(t)
		peak = max(peak, rss)
		if !checkedMid && time.Since(turned) > stale/2 {
			checkedMid = true
			if info, err := ask(time.Second); err != nil || info.Name != "good" || info.Players != 1 {
				t.Errorf("%s after the SDK server went bad (stale_after %s): A2S %+v %v, want the last good GameServer", time.Since(turned), stale, info, err)
			}
		}
		if code, body := healthz(t, d); code == 503 {
			silentAt = time.Since(turned)
			if body["reason"] != "agones" {
				t.Errorf("/healthz 503 %v, want reason agones", body)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	m := d.Metrics(t)
	got := map[string]float64{}
	for _, o := range []string{"not_json", "shape", "too_long", "timeout"} {
		got["watch "+o] = reads(m, "watch", o)
	}
	got["get not_json"] = reads(m, "get", "not_json")
	for k, n := range got {
		if n < 1 {
			t.Errorf("queryd_agones_reads_total{%s} = %v: not counted", k, n)
		}
	}
	t.Logf("silent %s after the SDK server went bad (stale_after %s, the last good read at most one interval before); %d MiB of bad stream written; RSS %.1f MiB before, peak %.1f MiB (bound +%.0f MiB); refused: %v",
		silentAt.Round(time.Millisecond), stale, sdk.written.Load()>>20, mib(rss0), mib(peak), mib(agonesRSSBound()), got)
	if silentAt < stale-time.Second {
		t.Errorf("silent %s after the SDK server went bad: before stale_after (%s) less one read's interval", silentAt, stale)
	}
	if grew := peak - rss0; grew > agonesRSSBound() {
		t.Errorf("RSS grew by %.1f MiB while the SDK server streamed %d MiB, more than the %.0f MiB bound: the stream is held, not skipped",
			mib(grew), sdk.written.Load()>>20, mib(agonesRSSBound()))
	}
	if _, err := ask(300 * time.Millisecond); err == nil {
		t.Errorf("A2S answered while silent")
	}

	sdk.bad.Store(false)
	back := time.Now()
	if !waitFor(10*time.Second, func() bool { info, err := ask(50 * time.Millisecond); return err == nil && info.Name == "good" }) {
		t.Fatalf("not answering again after the SDK server is good again:\n%s", d.Output())
	}
	t.Logf("answering again %s after the SDK server is good again", time.Since(back).Round(time.Millisecond))
}

// agonesRSSBound is how much the daemon's RSS may grow while the SDK
// server streams hundreds of MiB: one line's buffer (1 MiB) and the
// garbage of reading, with the race detector's shadow memory when it is
// on; nothing grows with the stream.
func agonesRSSBound() int64 {
	if *flagRace {
		return 64 << 20
	}
	return 24 << 20
}

// healthz is /healthz's status and body.
func healthz(t *testing.T, d *Daemon) (int, map[string]any) {
	t.Helper()
	resp, err := d.HTTPClient(5 * time.Second).Get("http://" + d.AdminAddr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}
