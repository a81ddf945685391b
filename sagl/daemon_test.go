package sagl_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/sagl"
)

// startSAGL runs a daemon with the SAGL module on daemontest.Base plus
// extra; the spy reaches the module's handler and services.
func startSAGL(t *testing.T, extra string) (*daemontest.Daemon, *daemontest.Spy) {
	t.Helper()
	spy := &daemontest.Spy{Module: sagl.Module{}}
	return daemontest.Start(t, []daemon.Module{spy}, extra), spy
}

// saglTestPNG writes a small PNG to dir/name and returns its path and bytes.
func saglTestPNG(t *testing.T, dir, name string, w int) (string, []byte) {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, w))
	for i := range img.Pix {
		img.Pix[i] = byte(i*7 + i/13)
	}
	img.Set(0, 0, color.White)
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, b.Bytes()
}

// saglHTTP returns the module's HTTP service.
func saglHTTP(t *testing.T, spy *daemontest.Spy) *sagl.HTTPService {
	t.Helper()
	for _, s := range spy.Made() {
		if h := sagl.AsHTTPService(s); h != nil {
			return h
		}
	}
	t.Fatal("no SAGL HTTP service")
	return nil
}

func saglClient(t *testing.T, d *daemontest.Daemon) *sagl.Client {
	t.Helper()
	c, err := sagl.Dial(d.UDP().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.Timeout = 3 * time.Second
	return c
}

func saglGet(t *testing.T, url string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	r, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, body
}

func saglPlayers(n int) map[string]any {
	ps := make(map[string]any, n)
	for i := 0; i < n; i++ {
		ps[fmt.Sprint(i)] = map[string]any{"name": fmt.Sprintf("Player %04d", i), "score": i % 50, "ping": 20 + i%100}
	}
	return ps
}

// A fed state with 1,000 players and a logo, over UDP (Go client and the
// module's query) and HTTP: the same JSON everywhere, the logo by its hash.
func TestSAGLOverUDPAndHTTP(t *testing.T) {
	dir := daemontest.Dir(t)
	logoPath, logo := saglTestPNG(t, dir, "logo.png", 48)
	d, spy := startSAGL(t, "[sagl]\nhttp = \"127.0.0.1:0\"\nlogo = \""+logoPath+"\"\n")
	_, err := d.Feed(t).Replace(map[string]any{
		"name": "Example RP", "version": "0.2.0", "protocol": 102, "max_players": 1000,
		"players":  saglPlayers(1000),
		"branding": map[string]any{"primary": "#ff8800", "show_name": true},
		"tags":     []string{"roleplay"}, "links": map[string]any{"website": "https://example.com"},
		"values": map[string]any{"map": "Los Santos", "copsOnDuty": 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := saglClient(t, d)
	res, err := c.Info()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(logo)
	in := res.Info
	if in.Name != "Example RP" || in.Version != "0.2.0" || in.Protocol != 102 || in.Players.Online != 1000 ||
		len(in.Players.List) != 1000 || in.Players.List[999].Name != "Player 0999" || in.Players.Truncated ||
		in.Branding.Logo == nil || in.Branding.Logo.SHA256 != hex.EncodeToString(sum[:]) || !in.Branding.ShowName ||
		in.Values["copsOnDuty"] != 3.0 || in.Links["website"] != "https://example.com" {
		t.Fatalf("UDP info: %+v", in)
	}
	lr, err := c.Logo()
	if err != nil || !bytes.Equal(lr.Data, logo) {
		t.Fatalf("logo over UDP: %v", err)
	}

	base := "http://" + saglHTTP(t, spy).Addr()
	for _, p := range []string{"/", "/query"} {
		hres, body := saglGet(t, base+p)
		if hres.StatusCode != 200 || !bytes.Equal(body, res.JSON) || hres.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("GET %s: %d, %d bytes (UDP %d), the HTTP JSON must equal the UDP JSON", p, hres.StatusCode, len(body), len(res.JSON))
		}
	}
	etag := `"` + hex.EncodeToString(sum[:]) + `"`
	hres, body := saglGet(t, base+"/logo")
	if hres.StatusCode != 200 || hres.Header.Get("ETag") != etag || hres.Header.Get("Content-Type") != "image/png" || !bytes.Equal(body, logo) {
		t.Fatalf("GET /logo: %d %v", hres.StatusCode, hres.Header)
	}
	if hres, _ = saglGet(t, base+"/logo", "If-None-Match", etag); hres.StatusCode != 304 {
		t.Fatalf("If-None-Match: %d", hres.StatusCode)
	}

	// What `queryd query -proto sagl -logo FILE` prints and saves.
	out := filepath.Join(dir, "got.png")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var notes bytes.Buffer
	ans, err := sagl.Module{}.Query(ctx, d.UDP().String(), module.QueryOptions{Logo: out, Notes: &notes})
	if err != nil {
		t.Fatalf("the module's query: %v", err)
	}
	full, err := json.Marshal(ans.Full)
	if err != nil {
		t.Fatal(err)
	}
	var cli, udp any
	json.Unmarshal(res.JSON, &udp)
	if err := json.Unmarshal(full, &cli); err != nil || fmt.Sprint(cli) != fmt.Sprint(udp) {
		t.Fatalf("the query's JSON differs from the UDP JSON: %v", err)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, logo) {
		t.Fatal("the query saved a different logo")
	}
	if s := ans.Summary; s.Name != "Example RP" || s.Map != "" || s.Players == nil || *s.Players != 1000 || s.MaxPlayers == nil || *s.MaxPlayers != 1000 {
		t.Fatalf("summary %+v", s)
	}
	if n := notes.String(); !strings.Contains(n, "round trip") || !strings.Contains(n, "saved to "+out) {
		t.Fatalf("notes %q", n)
	}
}

// saglLogoSHA polls the SAGL info until its logo hash is want ("" for no
// logo) and returns the last answer: feed-set logos load in the background.
func saglLogoSHA(t *testing.T, c *sagl.Client, want string) *sagl.Result {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		res, err := c.Info()
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if res.Info.Branding.Logo != nil {
			got = res.Info.Branding.Logo.SHA256
		}
		if got == want {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("SAGL logo %q after 3 s, want %q: %s", got, want, res.JSON)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// saglLogoSettled waits until the SAGL logo loader has loaded (or refused)
// the logo the current state asks for.
func saglLogoSettled(t *testing.T, spy *daemontest.Spy) {
	t.Helper()
	p, ok := spy.Live().(*sagl.Protocol)
	if !ok {
		t.Fatalf("the live SAGL handler is %T", spy.Live())
	}
	deadline := time.Now().Add(3 * time.Second)
	for !p.LogoSettled() {
		if time.Now().After(deadline) {
			t.Fatal("the SAGL logo did not settle within 3 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// branding.logo set through the feed (a path relative to [sagl] logo_dir)
// replaces the config's logo; a missing file, and any path leading out of
// logo_dir, is served as no logo.
func TestSAGLLogoFromFeed(t *testing.T) {
	dir := daemontest.Dir(t)
	logos := filepath.Join(dir, "logos")
	os.Mkdir(logos, 0o755)
	cfgLogo, cfgBytes := saglTestPNG(t, dir, "a.png", 8)
	_, feedBytes := saglTestPNG(t, logos, "b.png", 20)
	outside, _ := saglTestPNG(t, dir, "outside.png", 12)
	os.Symlink(outside, filepath.Join(logos, "link.png"))
	d, spy := startSAGL(t, "[sagl]\nplayers = \"count\"\nlogo = \""+cfgLogo+"\"\nlogo_dir = \""+logos+"\"\n")
	fc := d.Feed(t)
	c := saglClient(t, d)
	hexOf := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	res := saglLogoSHA(t, c, hexOf(cfgBytes)) // the config's logo, from the start
	if _, err := fc.Patch(map[string]any{"branding": map[string]any{"logo": "b.png"}}); err != nil {
		t.Fatal(err)
	}
	res = saglLogoSHA(t, c, hexOf(feedBytes))
	if res.Info.Players == nil || res.Info.Players.Online != 0 || strings.Contains(string(res.JSON), `"list"`) {
		t.Fatalf("players = \"count\": %s", res.JSON)
	}
	if lr, err := c.Logo(); err != nil || !bytes.Equal(lr.Data, feedBytes) {
		t.Fatalf("feed logo over UDP: %v", err)
	}
	for _, path := range []string{"missing.png", outside, "../outside.png", "link.png"} {
		if _, err := fc.Patch(map[string]any{"branding": map[string]any{"logo": "b.png"}}); err != nil {
			t.Fatal(err)
		}
		saglLogoSHA(t, c, hexOf(feedBytes))
		if _, err := fc.Patch(map[string]any{"branding": map[string]any{"logo": path}}); err != nil {
			t.Fatal(err)
		}
		saglLogoSettled(t, spy)
		saglLogoSHA(t, c, "")
		if lr, err := c.Logo(); err != nil || lr.Data != nil {
			t.Fatalf("logo %s over UDP: %+v %v", path, lr, err)
		}
	}
}

// [server] branding.logo in the config is the operator's: any path, like
// [sagl] logo, with no logo_dir; the feed setting another path is refused.
func TestSAGLServerBrandingLogo(t *testing.T) {
	dir := daemontest.Dir(t)
	path, data := saglTestPNG(t, dir, "server.png", 10)
	d, spy := startSAGL(t, "[server.branding]\nlogo = \""+path+"\"\n")
	c := saglClient(t, d)
	sum := sha256.Sum256(data)
	saglLogoSHA(t, c, hex.EncodeToString(sum[:]))
	other, _ := saglTestPNG(t, dir, "other.png", 12)
	if _, err := d.Feed(t).Patch(map[string]any{"branding": map[string]any{"logo": other}}); err != nil {
		t.Fatal(err)
	}
	saglLogoSettled(t, spy)
	saglLogoSHA(t, c, "")
}

// [sagl] http_max_conns and http_idle_timeout reach the HTTP listener and
// server; idle connections past ¾ of the cap are shed.
func TestSAGLHTTPCapConfig(t *testing.T) {
	d, spy := startSAGL(t, "[sagl]\nhttp = \"127.0.0.1:0\"\nhttp_max_conns = 8\nhttp_idle_timeout = \"7s\"\n")
	s := saglHTTP(t, spy)
	if s.MaxConns() != 8 || s.IdleTimeout() != 7*time.Second {
		t.Fatalf("SAGL HTTP service: max_conns %d, idle timeout %v; want 8, 7s", s.MaxConns(), s.IdleTimeout())
	}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < 20; i++ {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		open, shed := d.Metric(t, "queryd_sagl_http_connections", ""), d.Metric(t, "queryd_sagl_http_closed_total", "idle")
		if shed >= 14 && open == 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("20 idle connections at a cap of 8: %v open, %v shed; want 6, 14", open, shed)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if res, _ := saglGet(t, "http://"+s.Addr()+"/"); res.StatusCode != 200 {
		t.Fatalf("GET / with the idle connections held: %d", res.StatusCode)
	}
}

// [sagl] enabled = false runs no HTTP service either, though http is set
// (the daemon asks every module for its services, an off one too).
func TestSAGLOffServesNoHTTP(t *testing.T) {
	d, spy := startSAGL(t, "[sagl]\nenabled = false\nhttp = \"127.0.0.1:0\"\n")
	if made := spy.Made(); len(made) != 0 {
		t.Fatalf("services %v with [sagl] off", made)
	}
	if p := d.Protocols(); len(p) != 0 {
		t.Fatalf("protocols %v", p)
	}
}
