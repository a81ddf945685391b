package hostile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/internal/testkit"
	"github.com/queryd/queryd/quake3"
	"github.com/queryd/queryd/sagl"
)

// writePNG writes a small PNG (its pixels seeded by seed) and returns its bytes.
func writePNG(t testing.TB, path string, seed byte) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 16, 16))
	for i := range img.Pix {
		img.Pix[i] = byte(i) ^ seed
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func mkfifo(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("cannot make a FIFO: %v", err)
	}
}

// feedWithin is a feed client whose every message must be answered within 2 s.
func feedWithin(t testing.TB, d *Daemon) *feed.Client {
	t.Helper()
	c := d.Feed(t)
	c.Timeout = 2 * time.Second
	return c
}

// patchNow sends a patch that must be applied at once (within 2 s).
func patchNow(t testing.TB, c *feed.Client, what string, patch map[string]any) {
	t.Helper()
	start := time.Now()
	if _, err := c.Patch(patch); err != nil {
		t.Fatalf("%s: %v after %v (the state store is frozen?)", what, err, time.Since(start).Round(time.Millisecond))
	}
}

// httpClient is a client with one fresh connection per request.
var httpClient = &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// httpGet asks the SAGL HTTP listener for path and returns the status and body.
func httpGet(httpAddr, path string) (int, []byte, error) {
	res, err := httpClient.Get("http://" + httpAddr + path)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return res.StatusCode, body, err
}

// namesSeen asks the protocols in want (a2s, quake3, sagl, http) for the
// server name, each with a real client; a failed query reports its error.
func namesSeen(d *Daemon, httpAddr string, which []string) map[string]string {
	got := map[string]string{}
	for _, p := range which {
		var name string
		var err error
		switch p {
		case "a2s":
			var c *a2s.Client
			if c, err = a2s.Dial(d.UDPAddr); err == nil {
				var in *a2s.Info
				if in, err = c.Info(); err == nil {
					name = in.Name
				}
				c.Close()
			}
		case "quake3":
			var c *quake3.Client
			if c, err = quake3.Dial(d.UDPAddr); err == nil {
				var in *quake3.Info
				if in, err = c.Info(); err == nil {
					name = in.Get("hostname")
				}
				c.Close()
			}
		case "sagl":
			var c *sagl.Client
			if c, err = sagl.Dial(d.UDPAddr); err == nil {
				c.Timeout = 2 * time.Second
				var res *sagl.Result
				if res, err = c.Info(); err == nil {
					name = res.Info.Name
				}
				c.Close()
			}
		case "http":
			var body []byte
			if _, body, err = httpGet(httpAddr, "/"); err == nil {
				var in sagl.Info
				err = json.Unmarshal(body, &in)
				name = in.Name
			}
		}
		if err != nil {
			name = "error: " + err.Error()
		}
		got[p] = name
	}
	return got
}

// expectNameEverywhere polls until A2S, Quake 3, SAGL over UDP and (with
// httpAddr) SAGL over HTTP all show name, within 2 s. Only the protocols
// not showing it yet are asked again (Quake 3 allows 10 requests at once
// and then one a second per address).
func expectNameEverywhere(t testing.TB, d *Daemon, httpAddr, name string) {
	t.Helper()
	left := []string{"a2s", "quake3", "sagl"}
	if httpAddr != "" {
		left = append(left, "http")
	}
	start := time.Now()
	var got map[string]string
	for {
		got = namesSeen(d, httpAddr, left)
		left = left[:0]
		for p, n := range got {
			if n != name {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Since(start) > 2*time.Second {
			t.Fatalf("after 2 s the name is not %q everywhere: %v", name, got)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// logoLog matches the daemon's log line about reading one logo path.
var logoLog = regexp.MustCompile(`msg="logo (loaded|not served)" protocol=sagl path=(\S+).*`)

// logoOutcome waits until the daemon has logged a result for path (one more
// than seen before) and returns it: "loaded" or "not served" with the line.
func logoOutcome(t testing.TB, d *Daemon, path string, before int) (string, string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		var n int
		for _, m := range logoLog.FindAllStringSubmatch(d.Output(), -1) {
			if strings.Trim(m[2], `"`) == path {
				if n++; n > before {
					return m[1], m[0]
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line about logo %s within 2 s", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logoLines counts the log lines about path so far.
func logoLines(d *Daemon, path string) int {
	n := 0
	for _, m := range logoLog.FindAllStringSubmatch(d.Output(), -1) {
		if strings.Trim(m[2], `"`) == path {
			n++
		}
	}
	return n
}

// logoServed polls SAGL HTTP /logo until it serves want (nil: 404), within 2 s.
func logoServed(t testing.TB, httpAddr string, want []byte) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		code, body, err := httpGet(httpAddr, "/logo")
		if err == nil && ((want == nil && code == 404) || (want != nil && code == 200 && bytes.Equal(body, want))) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /logo: %d, %d bytes, %v; want %d bytes", code, len(body), err, len(want))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLogoFIFO (finding 2): the feed sets branding.logo to a FIFO. Every
// later patch must still apply at once and show in every protocol; then
// [sagl] logo set to a FIFO must make `queryd check` fail at once with the
// key and SIGHUP reject the config; a good SIGHUP and SIGTERM must work.
// queryd used to open the FIFO inside the store's lock and hang for good.
func TestLogoFIFO(t *testing.T) {
	t.Parallel() // a daemon of its own; it waits on timers and slow clients, not the CPU
	fifo := filepath.Join(t.TempDir(), "pipe.png")
	mkfifo(t, fifo)
	httpAddr := testkit.FreeTCPAddr(t)
	d := StartDaemon(t, Tables{"sagl": {"http": httpAddr}})
	fc := feedWithin(t, d)

	patchNow(t, fc, "the patch setting a FIFO logo", map[string]any{"branding": map[string]any{"logo": fifo}})
	start := time.Now()
	patchNow(t, fc, "the next patch", map[string]any{"name": "after the fifo"})
	expectNameEverywhere(t, d, httpAddr, "after the fifo")
	t.Logf("after the FIFO logo: the next patch and every protocol showing it in %v", time.Since(start).Round(time.Millisecond))
	if res, line := logoOutcome(t, d, fifo, 0); res != "not served" {
		t.Errorf("the FIFO logo: %s", line)
	}
	logoServed(t, httpAddr, nil)

	d.WriteConfig(t, baseTables(), Tables{"sagl": {"http": httpAddr, "logo": fifo}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	check := exec.CommandContext(ctx, querydBin, "check", "-config", d.ConfigPath)
	check.Stderr = &stderr
	start = time.Now()
	err := check.Run()
	took := time.Since(start)
	// Blocked on the FIFO, it would run until killed at 5 s; a race-built
	// check takes up to 2 s to start and exit on a busy machine.
	if ctx.Err() != nil || took > 4*time.Second {
		t.Fatalf("queryd check of a FIFO [sagl] logo took %v (killed after 5 s: %v)", took, ctx.Err())
	}
	if err == nil || !strings.Contains(stderr.String(), "sagl.logo: "+fifo+" is a named pipe (FIFO): not a regular file") {
		t.Errorf("queryd check of a FIFO [sagl] logo: %v\n%s", err, stderr.String())
	}
	t.Logf("queryd check: %v in %v: %s", err, took.Round(time.Millisecond), strings.TrimSpace(stderr.String()))

	rejected := strings.Count(d.Output(), "SIGHUP: config rejected")
	d.Signal(t, syscall.SIGHUP)
	if !waitFor(2*time.Second, func() bool { return strings.Count(d.Output(), "SIGHUP: config rejected") > rejected }) {
		t.Fatalf("SIGHUP with a FIFO [sagl] logo: not rejected within 2 s")
	}
	patchNow(t, fc, "a patch after the rejected SIGHUP", map[string]any{"name": "after the reload"})
	expectNameEverywhere(t, d, httpAddr, "after the reload")

	d.WriteConfig(t, baseTables(), Tables{"sagl": {"http": httpAddr}})
	reloaded := strings.Count(d.Output(), "SIGHUP: config reloaded")
	d.Signal(t, syscall.SIGHUP)
	if !waitFor(2*time.Second, func() bool { return strings.Count(d.Output(), "SIGHUP: config reloaded") > reloaded }) {
		t.Fatalf("SIGHUP with a good config: not reloaded within 2 s")
	}
	patchNow(t, fc, "a patch after the good SIGHUP", map[string]any{"name": "after the good reload"})
	expectNameEverywhere(t, d, httpAddr, "after the good reload")
	fc.Close()
	took = gameReconnect(t, d, "reconnected")
	expectNameEverywhere(t, d, httpAddr, "reconnected")
	t.Logf("the game server reconnected and patched in %v", took.Round(time.Millisecond))
	took, err = d.Terminate(t, 2*time.Second)
	if err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
	t.Logf("SIGTERM: exited in %v", took.Round(time.Millisecond))
}

// TestFeedLogoConfined (finding 10): the feed can no longer make queryd
// read and serve any file its user can read. Without [sagl] logo_dir (the
// default) every feed-set logo is refused; with it, only regular files
// inside it are served: no absolute path, "..", symlink leading out, or
// FIFO (and a good logo set after a FIFO is served at once). queryd used to
// serve any PNG or JPEG the feed named.
func TestFeedLogoConfined(t *testing.T) {
	t.Parallel() // a daemon of its own; it waits on timers and slow clients, not the CPU
	files := t.TempDir()
	secret := filepath.Join(files, "secret.png")
	writePNG(t, secret, 1)
	logos := filepath.Join(files, "logos")
	if err := os.Mkdir(logos, 0o755); err != nil {
		t.Fatal(err)
	}
	good := writePNG(t, filepath.Join(logos, "good.png"), 2)
	mkfifo(t, filepath.Join(logos, "pipe.png"))
	if err := os.Symlink("../secret.png", filepath.Join(logos, "link.png")); err != nil {
		t.Fatal(err)
	}
	refused := func(t *testing.T, d *Daemon, fc *feed.Client, httpAddr, path string) {
		t.Helper()
		before := logoLines(d, path)
		patchNow(t, fc, "setting logo "+path, map[string]any{"branding": map[string]any{"logo": path}})
		if res, line := logoOutcome(t, d, path, before); res != "not served" {
			t.Errorf("feed logo %s: %s", path, line)
		} else {
			t.Logf("feed logo %s: %s", path, line[strings.Index(line, "err="):])
		}
		logoServed(t, httpAddr, nil)
	}

	t.Run("no logo_dir", func(t *testing.T) {
		httpAddr := testkit.FreeTCPAddr(t)
		d := StartDaemon(t, Tables{"sagl": {"http": httpAddr}})
		fc := feedWithin(t, d)
		refused(t, d, fc, httpAddr, secret)
		refused(t, d, fc, httpAddr, "/etc/passwd")
		gameReconnect(t, d, "reconnected")
		expectNameEverywhere(t, d, httpAddr, "reconnected")
	})
	t.Run("logo_dir", func(t *testing.T) {
		httpAddr := testkit.FreeTCPAddr(t)
		d := StartDaemon(t, Tables{"sagl": {"http": httpAddr, "logo_dir": logos}})
		fc := feedWithin(t, d)
		for _, path := range []string{secret, "../secret.png", "link.png", "pipe.png", "/etc/passwd"} {
			patchNow(t, fc, "setting a good logo", map[string]any{"branding": map[string]any{"logo": "good.png"}})
			logoServed(t, httpAddr, good)
			refused(t, d, fc, httpAddr, path)
		}
		patchNow(t, fc, "setting a good logo", map[string]any{"branding": map[string]any{"logo": "good.png"}})
		logoServed(t, httpAddr, good)
		sum := sha256.Sum256(good)
		c, err := sagl.Dial(d.UDPAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		res, err := c.Info()
		if err != nil || res.Info.Branding.Logo == nil || res.Info.Branding.Logo.SHA256 != hex.EncodeToString(sum[:]) {
			t.Fatalf("SAGL over UDP: the good logo not announced: %v", err)
		}
		gameReconnect(t, d, "reconnected")
		expectNameEverywhere(t, d, httpAddr, "reconnected")
	})
}
