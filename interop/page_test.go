package interop

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/daemon/daemontest"
)

// pageMods are the page tests' daemons' protocol modules.
var pageMods = []daemon.Module{a2s.Module{}}

// hostileNames are player names that must show as the text they are.
var hostileNames = []string{
	`<img src=x onerror=alert(1)>`,
	`<img src=x onerror="document.body.dataset.pwned='img'">`,
	`<script>document.body.dataset.pwned='script'</script>`,
	`x<y>&z`,
	`"quoted" & 'single'`,
	`Zoë Ünïcødé 日本語 Ωμέγα 🎮`,
	`Thomas`,
}

// The player list the page renders is the fed state's, row for row,
// non-ASCII names included; names made of HTML show as that text while no
// script runs: no dialog, no element injected, the page's marker
// untouched.
func TestPagePlayersAsText(t *testing.T) {
	d := daemontest.Start(t, pageMods, "")
	players := map[string]any{}
	for i, n := range hostileNames {
		players[fmt.Sprint(i)] = map[string]any{"name": n, "score": 10 * i, "ping": 20 + i}
	}
	v, err := d.Feed(t).Replace(map[string]any{"name": `<b>Bold</b> & "Co"`, "map": "<i>map</i>", "players": players, "max_players": 32})
	if err != nil {
		t.Fatal(err)
	}
	p := openPage(t, d)
	p.waitVersion(t, v)

	rows := eval[[][]string](t, p, `Array.from(document.querySelectorAll("#players tbody tr"),
		tr => Array.from(tr.cells, td => td.textContent))`)
	snap := d.Snapshot()
	if len(rows) != len(snap.Players) {
		t.Fatalf("%d rows shown, the state has %d players: %q", len(rows), len(snap.Players), rows)
	}
	for i, pl := range snap.Players {
		want := []string{pl.Name, fmt.Sprint(pl.Score), fmt.Sprint(pl.Ping)}
		if !slices.Equal(rows[i][:3], want) {
			t.Errorf("row %d: %q, want %q", i, rows[i][:3], want)
		}
	}
	shown := make([]string, len(rows))
	for i, r := range rows {
		shown[i] = r[0]
	}
	for _, n := range hostileNames {
		if !slices.Contains(shown, n) {
			t.Errorf("the name %q is not shown as text; shown: %q", n, shown)
		}
	}
	if got := eval[string](t, p, `document.getElementById("server-name").textContent`); got != `<b>Bold</b> & "Co"` {
		t.Errorf("server name shown as %q", got)
	}
	if got := eval[string](t, p, `document.getElementById("server-map").textContent`); got != "<i>map</i>" {
		t.Errorf("map shown as %q", got)
	}
	// Nothing was parsed as markup: no image, no bold or italic, only the
	// page's own script, and the injected handlers never ran.
	injected := eval[int](t, p, `document.querySelectorAll("img, b, i, main script, script:not([src])").length +
		document.scripts.length - 1`)
	if injected != 0 {
		t.Errorf("%d elements injected by the state's text", injected)
	}
	if pwned := eval[string](t, p, `document.body.dataset.pwned || ""`); pwned != "" {
		t.Errorf("an injected handler ran: %q", pwned)
	}
}

// The page asks only the admin address, and only what it ships: the page,
// its script and style, and /status.json (again and again). openPage's
// cleanup fails on any other host, a dialog or an exception.
func TestPageAsksOnlyAdmin(t *testing.T) {
	d := daemontest.Start(t, pageMods, "")
	p := openPage(t, d)
	// Two refreshes after the first render.
	first := strings.Count(strings.Join(p.asked(), " "), "/status.json")
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(strings.Join(p.asked(), " "), "/status.json") < first+2 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	asked := p.asked()
	for _, want := range []string{"/", "/status.js", "/status.css", "/status.json"} {
		if !slices.Contains(asked, want) {
			t.Errorf("the page never asked %s: %q", want, asked)
		}
	}
	if n := strings.Count(strings.Join(asked, " "), "/status.json"); n < first+2 {
		t.Errorf("/status.json asked %d times in 5 s after the first %d: the page does not refresh", n-first, first)
	}
	for _, a := range asked {
		switch a {
		case "/", "/status.js", "/status.css", "/status.json", "/favicon.ico":
		default:
			t.Errorf("the page asked %s", a)
		}
	}
}

// Under a short load from the bench generator, the A2S answered sparkline
// rises within 3 s, and the busiest sources list the generator's addresses.
func TestPageAnsweredSparklineRises(t *testing.T) {
	if _, err := benchBinary(); err != nil { // built before the clock starts
		t.Fatal(err)
	}
	d := daemontest.Start(t, pageMods, "")
	p := openPage(t, d)
	const answered = `document.querySelector('#traffic-table tr[data-proto="a2s"] [data-series="answered"] svg')`
	if last := eval[string](t, p, answered+`.dataset.last`); last != "0" {
		t.Fatalf("answered before any load: %s", last)
	}
	wait := startLoad(t, d, "a2s_info", 3, 3*time.Second, 30000)
	took := p.waitJS(t, 3*time.Second, answered+`.dataset.last > 0`)
	t.Logf("the answered sparkline rose %s after the load started", took.Round(time.Millisecond))
	wait()
	if n := d.Metric(t, "queryd_requests_total", "answered"); n == 0 {
		t.Fatal("the daemon answered nothing")
	}
	p.waitJS(t, 3*time.Second, `["127.0.0.2", "127.0.0.3", "127.0.0.4"].every(s =>
		document.querySelector('#busiest-table tr[data-source="' + s + '"]'))`)
	top := eval[string](t, p, `document.querySelector('#busiest-table tbody tr td.mix').textContent`)
	if !strings.Contains(top, "answered") {
		t.Errorf("the busiest source's outcome mix %q has no answered", top)
	}
}

// A fed server (a replace, then pings) shows "live"; after stale_after
// without a feed message the stale banner appears; after a ping it goes.
// (Pings alone never make it "live": until state is sent it is "not fed
// yet", issue 38.)
func TestPageStaleBanner(t *testing.T) {
	path := daemontest.WriteConfig(t, daemontest.Dir(t), "")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), `stale_after = "60s"`, `stale_after = "2s"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	d := daemontest.StartFile(t, pageMods, path)
	t.Cleanup(func() { d.Stop() })
	fc := d.Feed(t)
	if _, err := fc.Replace(map[string]any{"name": "Stale banner", "map": "q3dm17"}); err != nil {
		t.Fatal(err)
	}
	p := openPage(t, d) // may take longer than stale_after on a loaded machine
	const banner = `document.getElementById("silent-banner")`
	// The feed is kept fresh until the page shows it live (on a loaded
	// machine the page's first sample can come after stale_after), then
	// left alone: the page reads a document of the last second's sample and
	// asks once a second, so the banner shows within 2 s + 3 s of the last
	// ping.
	stop, pinged := make(chan struct{}), make(chan error, 1)
	go func() {
		for {
			if _, err := fc.Ping(); err != nil {
				pinged <- err
				return
			}
			select {
			case <-stop:
				pinged <- nil
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	p.waitJS(t, 10*time.Second, banner+`.hidden && document.getElementById("feed-state").textContent === "live"`)
	close(stop)
	if err := <-pinged; err != nil {
		t.Fatal(err)
	}
	p.waitJS(t, 2*time.Second+3*time.Second, `!`+banner+`.hidden`)
	text := eval[string](t, p, banner+`.textContent`)
	if !strings.Contains(text, "Silent on every protocol since") || !strings.Contains(text, "the feed has sent nothing for") {
		t.Errorf("stale banner %q", text)
	}
	if _, err := fc.Ping(); err != nil {
		t.Fatal(err)
	}
	p.waitJS(t, 3*time.Second, banner+`.hidden`)
	if got := eval[string](t, p, `document.getElementById("feed-state").textContent`); got != "live" {
		t.Errorf("feed state after the ping: %q", got)
	}
}
