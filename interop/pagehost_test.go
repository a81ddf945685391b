package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/feed"
)

// startPageHost runs a host of three servers (alpha, bravo with a 1 s
// stale_after, charlie) with the page's modules, in this process.
func startPageHost(t *testing.T) *daemontest.Daemon {
	t.Helper()
	dir := daemontest.Dir(t)
	if err := os.Mkdir(filepath.Join(dir, "servers.d"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"alpha", "bravo", "charlie"} {
		stale := "60s"
		if n == "bravo" {
			stale = "1s"
		}
		body := fmt.Sprintf("[listen]\nudp = [\"127.0.0.1:0\"]\nworkers = 1\n[feed]\nsocket = %q\nstale_after = %q\n[server]\nname = \"Server %s\"\nmap = \"map_%s\"\nmax_players = 8\n",
			filepath.Join(dir, n+".sock"), stale, n, n)
		if err := os.WriteFile(filepath.Join(dir, "servers.d", n+".toml"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "queryd.toml")
	if err := os.WriteFile(path, []byte("[admin]\nlisten = \"127.0.0.1:0\"\n[servers]\ninclude = [\"servers.d/*.toml\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := daemontest.StartHost(t, pageMods, path)
	t.Cleanup(func() {
		if err := d.Stop(); err != nil {
			t.Errorf("the daemon stopped with an error: %v", err)
		}
	})
	return d
}

// TestPageServerList: on a host of three servers the page lists them in
// Chromium — name, state, feed, the state's name and players — shows the
// one whose feed went stale as silent and stale, the one never fed as "not
// fed yet: serving [server]" (issue 38), and a row's link opens
// that server's own page (its name, its players, a way back).
func TestPageServerList(t *testing.T) {
	d := startPageHost(t)
	alpha := feedTo(t, d, "alpha")
	if _, err := alpha.Replace(map[string]any{"name": "Alpha <b>fed</b>", "max_players": 8,
		"players": map[string]any{"1": map[string]any{"name": "Ann"}, "2": map[string]any{"name": "Bo"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := feedTo(t, d, "bravo").Ping(); err != nil { // bravo's feed spoke: stale 1 s later
		t.Fatal(err)
	}
	p := openPage(t, d)
	p.waitJS(t, 5*time.Second, `document.querySelectorAll("#servers-table tbody tr").length === 3`)
	if !eval[bool](t, p, `document.querySelector("main").hidden`) {
		t.Error("the one-server cards show beside the list")
	}
	p.waitJS(t, 10*time.Second, `document.querySelector('#servers-table tr[data-server="bravo"] td.state').textContent.startsWith("silent")`)
	rows := eval[[][]string](t, p, `Array.from(document.querySelectorAll("#servers-table tbody tr"),
		tr => Array.from(tr.cells, td => td.textContent))`)
	names := []string{}
	for _, r := range rows {
		names = append(names, r[0])
	}
	if !slices.Equal(names, []string{"alpha", "bravo", "charlie"}) {
		t.Fatalf("rows %q", rows)
	}
	if want := []string{"alpha", "answering", "live", "Alpha <b>fed</b>", "map_alpha", "2 / 8"}; !slices.Equal(rows[0][:6], want) {
		t.Errorf("alpha's row %q, want %q", rows[0][:6], want)
	}
	if rows[1][1] != "silent (feed)" || rows[1][2] != "stale" {
		t.Errorf("bravo's row %q: want silent (feed) and stale", rows[1])
	}
	if rows[2][1] != "not fed yet: serving [server]" || rows[2][2] != "not fed" || rows[2][3] != "Server charlie" { // never fed (issue 38)
		t.Errorf("charlie's row %q", rows[2])
	}

	href := eval[string](t, p, `document.querySelector('#servers-table tr[data-server="alpha"] a').getAttribute("href")`)
	if href != "/?server=alpha" {
		t.Fatalf("alpha's link is %q", href)
	}
	p.run(t, 30*time.Second, chromedp.Navigate("http://"+p.admin+href)) // what following the link does
	p.waitJS(t, 10*time.Second, `document.body.dataset.view === "server" && document.getElementById("server-name").textContent === "Alpha <b>fed</b>"`)
	players := eval[[]string](t, p, `Array.from(document.querySelectorAll("#players tbody tr"), tr => tr.cells[0].textContent)`)
	if !slices.Equal(players, []string{"Ann", "Bo"}) {
		t.Errorf("alpha's page lists %q", players)
	}
	if eval[bool](t, p, `document.getElementById("back").hidden`) || !strings.Contains(eval[string](t, p, `location.search`), "server=alpha") {
		t.Error("alpha's page has no way back to the list, or is not /?server=alpha")
	}
	if !slices.Contains(p.asked(), "/servers.json") {
		t.Errorf("the list never asked /servers.json: %q", p.asked())
	}
}

// feedTo connects to server name's feed socket; it closes when t ends.
func feedTo(t *testing.T, d *daemontest.Daemon, name string) *feed.Client {
	t.Helper()
	s := d.Server(name)
	if s == nil {
		t.Fatalf("no server %s", name)
	}
	c, err := feed.Dial(s.FeedPath())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
