package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/daemon"
)

const feedToken = "feed-http-test-token-0123456789"

// feedHTTPConfig is the [feed] keys of a daemon with the HTTP feed on
// addr and a token file in dir holding tok.
func feedHTTPConfig(t *testing.T, dir, addr, tok string) string {
	t.Helper()
	path := filepath.Join(dir, "feed.token")
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("http = %q\nhttp_token_file = %q\n", addr, path)
}

// withFeedKeys writes the test config with extra appended and keys added
// to its [feed] table.
func withFeedKeys(t *testing.T, dir, keys, extra string) string {
	t.Helper()
	path := writeConfig(t, dir, extra)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), "[feed]\n", "[feed]\n"+keys, 1))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// feedRequest sends one request to the HTTP feed at addr and returns the
// status code and the reply's JSON.
func feedRequest(t *testing.T, method, addr, path, tok, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	res, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var rep map[string]any
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("%s %s: %q: %v", method, path, b, err)
	}
	return res.StatusCode, rep
}

// TestFeedHTTPThenA2S: a state PUT and a player patched in over the HTTP
// feed are what A2S answers at once; a request without the token changes
// nothing; the answers are counted by code.
func TestFeedHTTPThenA2S(t *testing.T) {
	dir := testDir(t)
	d := startTestDaemon(t, withFeedKeys(t, dir, feedHTTPConfig(t, dir, "127.0.0.1:0", feedToken), ""))
	addr := d.FeedHTTPAddr()
	if addr == "" {
		t.Fatal("no HTTP feed address")
	}
	ac, err := a2s.Dial(d.UDP().String())
	if err != nil {
		t.Fatal(err)
	}
	defer ac.Close()
	if code, rep := feedRequest(t, "PUT", addr, "/v1/state", feedToken, `{"name":"HTTP fed ✓","map":"de_dust","max_players":12,"players":{"1":{"name":"Zoë","score":5}}}`); code != 200 || rep["ok"] != true {
		t.Fatalf("PUT: %d %v", code, rep)
	}
	if code, rep := feedRequest(t, "PATCH", addr, "/v1/state", feedToken, `{"players":{"2":{"name":"Łukasz","score":1}}}`); code != 200 {
		t.Fatalf("PATCH: %d %v", code, rep)
	}
	info, err := ac.Info()
	if err != nil || info.Name != "HTTP fed ✓" || info.Players != 2 {
		t.Fatalf("A2S_INFO right after the patch: %+v %v", info, err)
	}
	ps, err := ac.Players()
	if err != nil || len(ps) != 2 || ps[1].Name != "Łukasz" {
		t.Fatalf("A2S_PLAYER right after the patch: %+v %v", ps, err)
	}
	if code, _ := feedRequest(t, "PATCH", addr, "/v1/state", "not-the-token-0123456789", `{"name":"intruder"}`); code != 401 {
		t.Fatalf("wrong token: %d", code)
	}
	if info, _ := ac.Info(); info == nil || info.Name != "HTTP fed ✓" {
		t.Fatalf("a request with the wrong token changed the state: %+v", info)
	}
	if n := d.Metric(t, "queryd_feed_http_responses_total", "401"); n != 1 {
		t.Fatalf("queryd_feed_http_responses_total{code=401} = %v", n)
	}
	if n := d.Metric(t, "queryd_feed_http_responses_total", "200"); n != 2 {
		t.Fatalf("queryd_feed_http_responses_total{code=200} = %v", n)
	}
}

// TestFeedHTTPRefused: a non-loopback [feed] http and a token file others
// may read are refused by queryd check and at start, naming the key.
func TestFeedHTTPRefused(t *testing.T) {
	dir := testDir(t)
	path := withFeedKeys(t, dir, feedHTTPConfig(t, dir, "0.0.0.0:27017", feedToken), "")
	if code, _, errOut := run(t, "", "check", "-config", path); code != 1 || !strings.Contains(errOut, "feed.http: want a loopback address") {
		t.Fatalf("check of a non-loopback address: %d %q", code, errOut)
	}
	dir = testDir(t)
	path = withFeedKeys(t, dir, feedHTTPConfig(t, dir, "127.0.0.1:0", feedToken), "")
	if code, out, errOut := run(t, "", "check", "-config", path); code != 0 {
		t.Fatalf("check of a good config: %d %q %q", code, out, errOut)
	}
	os.Chmod(filepath.Join(dir, "feed.token"), 0o644)
	if code, _, errOut := run(t, "", "check", "-config", path); code != 1 || !strings.Contains(errOut, "feed.http_token_file: token file") || !strings.Contains(errOut, "lets others read it") {
		t.Fatalf("check of a 0644 token file: %d %q", code, errOut)
	}
	cfg, err := loadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := daemon.New(daemon.Options{Config: cfg, Path: path, Modules: daemonModules()}); err == nil || !strings.Contains(err.Error(), "feed http_token_file") {
		t.Fatalf("start with a 0644 token file: %v", err)
	}
	os.Chmod(filepath.Join(dir, "feed.token"), 0o600)
	os.WriteFile(filepath.Join(dir, "feed.token"), []byte("short\n"), 0o600)
	if code, _, errOut := run(t, "", "check", "-config", path); code != 1 || !strings.Contains(errOut, "want at least 16") {
		t.Fatalf("check of a short token: %d %q", code, errOut)
	}
}

// waitHTTP waits until something answers HTTP at addr.
func waitHTTP(ctx context.Context, t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+addr+"/v1/ping", nil)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing answers HTTP on %s", addr)
		}
	}
}

// waitCode waits until a ping with tok gets code.
func waitCode(t *testing.T, addr, tok string, code int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if got, _ := feedRequest(t, "POST", addr, "/v1/ping", tok, ""); got == code {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a ping with %q never got %d", tok, code)
		}
	}
}
