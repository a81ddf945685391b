package feed

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/state"
)

const testToken = "0123456789abcdef-test-token"

// writeToken writes a token file with mode perm and returns its path.
func writeToken(t *testing.T, dir, tok string, perm os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, "feed.token")
	if err := os.WriteFile(p, []byte(tok), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
	return p
}

// startHTTP runs a feed server with an HTTP feed on 127.0.0.1 port 0.
func startHTTP(t *testing.T, cfg Config, hc HTTPConfig) (*Server, *HTTPServer, *state.Store, string) {
	t.Helper()
	s, store := start(t, cfg)
	if hc.TokenFile == "" {
		hc.TokenFile = writeToken(t, shortDir(t), testToken+"\n", 0o600)
	}
	hc.Addr = netip.MustParseAddrPort("127.0.0.1:0")
	h, err := s.ListenHTTP(hc)
	if err != nil {
		t.Fatal(err)
	}
	go h.Serve()
	t.Cleanup(func() { h.Close() })
	return s, h, store, "http://" + h.Addr().String()
}

// answer is one HTTP feed answer.
type answer struct {
	code int
	rep  Reply
	hdr  http.Header
}

func do(t *testing.T, method, url, token, ctype, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var a answer
	a.code, a.hdr = res.StatusCode, res.Header
	if err := json.Unmarshal(b, &a.rep); err != nil {
		t.Fatalf("%s %s: answer %q is not a reply: %v", method, url, b, err)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: Content-Type %q", method, url, ct)
	}
	return a
}

func TestHTTPEndpoints(t *testing.T) {
	_, h, store, base := startHTTP(t, Config{Peer: func(port int, _ netip.Addr) (string, string, error) {
		return "198.51.100.7:40000", "127.1.2.3:50000", nil
	}}, HTTPConfig{})
	a := do(t, "PUT", base+"/v1/state", testToken, "application/json", `{"name":"Ünïcødé ✓","map":"m1","max_players":8,"players":{"1":{"name":"Zoë","score":3}}}`)
	if a.code != 200 || !a.rep.OK || a.rep.Version == 0 {
		t.Fatalf("PUT: %+v", a)
	}
	snap := store.Snapshot()
	if snap.Name != "Ünïcødé ✓" || snap.Map != "m1" || len(snap.Players) != 1 || snap.Version != a.rep.Version {
		t.Fatalf("after PUT the store has %q %q %d players v%d", snap.Name, snap.Map, len(snap.Players), snap.Version)
	}
	a = do(t, "PATCH", base+"/v1/state", testToken, "application/merge-patch+json", `{"players":{"2":{"name":"Sam"},"1":null}}`)
	if a.code != 200 || a.rep.Version != snap.Version+1 {
		t.Fatalf("PATCH: %+v", a)
	}
	if p := store.Snapshot().Players; len(p) != 1 || p[0].Name != "Sam" {
		t.Fatalf("after PATCH: %+v", p)
	}
	a = do(t, "PATCH", base+"/v1/state", testToken, "application/json; charset=utf-8", `{"map":"m2"}`)
	if a.code != 200 || store.Snapshot().Map != "m2" {
		t.Fatalf("PATCH as application/json: %+v", a)
	}
	a = do(t, "GET", base+"/v1/state", testToken, "", "")
	var doc map[string]any
	if a.code != 200 || json.Unmarshal(a.rep.State, &doc) != nil || doc["map"] != "m2" || a.rep.Version != store.Snapshot().Version {
		t.Fatalf("GET: %+v (%s)", a, a.rep.State)
	}
	v := store.Snapshot().Version
	a = do(t, "POST", base+"/v1/ping", testToken, "", "")
	if a.code != 200 || !a.rep.OK || a.rep.Version != v || store.Snapshot().Version != v {
		t.Fatalf("ping: %+v", a)
	}
	if a = do(t, "POST", base+"/v1/ping", testToken, "application/json", "{}"); a.code != 200 {
		t.Fatalf("ping with {}: %+v", a)
	}
	a = do(t, "POST", base+"/v1/peer", testToken, "application/json", `{"port":40000}`)
	if a.code != 200 || a.rep.Peer != "198.51.100.7:40000" {
		t.Fatalf("peer: %+v", a)
	}
	if st := h.Stats(); st.Responses["200"] != 7 {
		t.Fatalf("responses %v", st.Responses)
	}
}

func TestHTTPErrors(t *testing.T) {
	s, h, store, base := startHTTP(t, Config{}, HTTPConfig{})
	v := store.Snapshot().Version
	for _, c := range []struct {
		method, path, token, ctype, body string
		code                             int
		err                              string
	}{
		{"PUT", "/v1/state", "", "", `{"name":"x"}`, 401, "missing or wrong token"},
		{"PUT", "/v1/state", testToken + "x", "", `{"name":"x"}`, 401, "missing or wrong token"},
		{"PUT", "/v1/state", "0123456789abcdef", "", `{"name":"x"}`, 401, "missing or wrong token"},
		{"GET", "/nope", "", "", "", 401, "missing or wrong token"}, // nothing is told without the token
		{"GET", "/nope", testToken, "", "", 404, `no endpoint "/nope"`},
		{"GET", "/v1/state/", testToken, "", "", 404, "no endpoint"},
		{"POST", "/v1/state", testToken, "", "{}", 405, "POST /v1/state: want GET, PUT, PATCH"},
		{"DELETE", "/v1/state", testToken, "", "", 405, "want GET, PUT, PATCH"},
		{"GET", "/v1/ping", testToken, "", "", 405, "want POST"},
		{"PUT", "/v1/peer", testToken, "", "", 405, "want POST"},
		// The socket's own errors, as its replies say them.
		{"PUT", "/v1/state", testToken, "", `{"max_players":-1}`, 400, "state.max_players: want an integer from 0 to 65535, got -1"},
		{"PATCH", "/v1/state", testToken, "", `{"players":{"3":{"score":1.5}}}`, 400, "state.players.3.score: want an integer"},
		{"PUT", "/v1/state", testToken, "", ``, 400, "empty body: replace needs a state document"},
		{"PUT", "/v1/state", testToken, "", `[1]`, 400, "state: not a JSON object"},
		{"PUT", "/v1/state", testToken, "", `{"name":"x"} {}`, 400, "state: trailing data"},
		{"PUT", "/v1/state", testToken, "", "{\"name\":\"\xff\"}", 400, "state: body is not valid UTF-8"},
		{"PUT", "/v1/state", testToken, "text/plain", `{"name":"x"}`, 400, `Content-Type "text/plain": want application/json`},
		{"PUT", "/v1/state", testToken, "application/merge-patch+json", `{"name":"x"}`, 400, "want application/json"},
		{"PATCH", "/v1/state", testToken, "application/x-www-form-urlencoded", `{"name":"x"}`, 400, "want application/merge-patch+json or application/json"},
		{"POST", "/v1/ping", testToken, "", `{"x":1}`, 400, `"x": unknown field for op "ping"`},
		{"POST", "/v1/ping", testToken, "", `{"op":"ping"}`, 400, `"op": unknown field for op "ping"`},
		{"POST", "/v1/peer", testToken, "", `{"port":0}`, 400, `"port": peer needs a port from 1 to 65535`},
		{"POST", "/v1/peer", testToken, "", ``, 400, `"port": peer needs a port`},
		{"POST", "/v1/peer", testToken, "", `{"port":5}`, 400, "peer: relay mode is off"},
	} {
		a := do(t, c.method, base+c.path, c.token, c.ctype, c.body)
		if a.code != c.code || a.rep.OK || !strings.Contains(a.rep.Error, c.err) {
			t.Errorf("%s %s %q (token %q): got %d %+v, want %d %q", c.method, c.path, c.body, c.token, a.code, a.rep, c.code, c.err)
		}
		switch c.code {
		case 401:
			if a.hdr.Get("WWW-Authenticate") == "" {
				t.Errorf("401 without WWW-Authenticate")
			}
		case 405:
			if a.hdr.Get("Allow") == "" {
				t.Errorf("405 without Allow")
			}
		}
	}
	if got := store.Snapshot(); got.Version != v || got.Name != "base" {
		t.Fatalf("rejected requests changed the state: v%d %q", got.Version, got.Name)
	}
	r := h.Stats().Responses
	if r["401"] != 4 || r["404"] != 2 || r["405"] != 4 || r["400"] != 14 || r["200"] != 0 {
		t.Fatalf("responses %v", r)
	}
	// No refused request is activity: not one refused before its op (401,
	// 404, 405, a bad body), nor one refused by the state's checks.
	if !s.LastFed().IsZero() || !s.Fed().IsZero() {
		t.Fatalf("refused requests counted as feed activity: last fed %v, fed %v", s.LastFed(), s.Fed())
	}
}

func TestHTTPUnauthorizedIsNotActivity(t *testing.T) {
	s, _, _, base := startHTTP(t, Config{StaleAfter: time.Minute}, HTTPConfig{})
	for _, tok := range []string{"", "wrong-token-wrong-token"} {
		do(t, "POST", base+"/v1/ping", tok, "", "")
	}
	if !s.LastFed().IsZero() {
		t.Fatal("a request without the token counted as feed activity")
	}
	do(t, "POST", base+"/v1/ping", testToken, "", "")
	if s.LastFed().IsZero() {
		t.Fatal("a ping with the token is not activity")
	}
}

func TestHTTPBodyCap(t *testing.T) {
	_, _, store, base := startHTTP(t, Config{}, HTTPConfig{})
	v := store.Snapshot().Version
	pad := strings.Repeat("x", MaxLine)
	// With a Content-Length over the cap, and chunked (no length) over it.
	a := do(t, "PUT", base+"/v1/state", testToken, "", `{"name":"`+pad+`"}`)
	if a.code != 413 || !strings.Contains(a.rep.Error, "longer than 1048576 bytes") {
		t.Fatalf("over the cap: %+v", a)
	}
	req, _ := http.NewRequest("PATCH", base+"/v1/state", io.MultiReader(strings.NewReader(`{"name":"`), strings.NewReader(pad), strings.NewReader(`"}`)))
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 413 || req.ContentLength != 0 {
		t.Fatalf("chunked over the cap: %d (length %d)", res.StatusCode, req.ContentLength)
	}
	// Exactly at the cap passes the cap (and is then judged as a state).
	doc := `{"description":"` + strings.Repeat("d", MaxLine-20) + `"}`
	doc += strings.Repeat(" ", MaxLine-len(doc))
	if a = do(t, "PUT", base+"/v1/state", testToken, "", doc); a.code == 413 {
		t.Fatalf("a body of exactly %d bytes: %+v", len(doc), a)
	}
	if store.Snapshot().Version != v && a.code != 200 {
		t.Fatal("a refused body changed the state")
	}
}

func TestHTTPTokenReload(t *testing.T) {
	dir := shortDir(t)
	path := writeToken(t, dir, "  first-token-0123456789\n", 0o640)
	_, h, _, base := startHTTP(t, Config{}, HTTPConfig{TokenFile: path})
	if a := do(t, "POST", base+"/v1/ping", "first-token-0123456789", "", ""); a.code != 200 {
		t.Fatalf("trimmed token: %+v", a)
	}
	writeToken(t, dir, "second-token-0123456789", 0o600)
	if a := do(t, "POST", base+"/v1/ping", "second-token-0123456789", "", ""); a.code != 401 {
		t.Fatalf("new token before the reload: %+v", a)
	}
	if err := h.ReloadToken(); err != nil {
		t.Fatal(err)
	}
	if a := do(t, "POST", base+"/v1/ping", "first-token-0123456789", "", ""); a.code != 401 {
		t.Fatalf("old token after the reload: %+v", a)
	}
	if a := do(t, "POST", base+"/v1/ping", "second-token-0123456789", "", ""); a.code != 200 {
		t.Fatalf("new token after the reload: %+v", a)
	}
	// A file gone bad keeps the token in use.
	writeToken(t, dir, "third-token-0123456789", 0o644)
	if err := h.ReloadToken(); err == nil || !strings.Contains(err.Error(), "lets others read it") {
		t.Fatalf("reload of a 0644 file: %v", err)
	}
	if a := do(t, "POST", base+"/v1/ping", "second-token-0123456789", "", ""); a.code != 200 {
		t.Fatalf("token after a refused reload: %+v", a)
	}
}

func TestReadTokenRefuses(t *testing.T) {
	dir := shortDir(t)
	good := writeToken(t, dir, testToken, 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(good, link)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o700)
	for _, c := range []struct {
		name, path string
		perm       os.FileMode
		tok        string
		err        string
	}{
		{"others may read", "", 0o644, testToken, "mode 0644 lets others read it; want 0600 or 0640"},
		{"group may write", "", 0o660, testToken, "mode 0660 lets its group write it"},
		{"others may write", "", 0o602, testToken, "lets others write or run it"},
		{"short", "", 0o600, " short-token \n", "the token has 11 bytes, want at least 16"},
		{"spaces", "", 0o600, "0123456789 abcdef", "only visible ASCII"},
		{"too long", "", 0o600, strings.Repeat("a", 5000), "longer than 4096 bytes"},
		{"symlink", link, 0, "", "a symbolic link, want a regular file"},
		{"directory", sub, 0, "", "a directory, want a regular file"},
		{"missing", filepath.Join(dir, "none"), 0, "", "no such file"},
	} {
		p := c.path
		if p == "" {
			p = writeToken(t, shortDir(t), c.tok, c.perm)
		}
		if _, err := ReadToken(p); err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want %q naming the file", c.name, err, c.err)
		}
	}
	if tok, err := ReadToken(good); err != nil || string(tok) != testToken {
		t.Fatalf("good file: %q %v", tok, err)
	}
	s, _ := start(t, Config{})
	if _, err := s.ListenHTTP(HTTPConfig{Addr: netip.MustParseAddrPort("127.0.0.1:0"), TokenFile: writeToken(t, shortDir(t), testToken, 0o604)}); err == nil || !strings.Contains(err.Error(), "http_token_file") {
		t.Fatalf("ListenHTTP with a 0604 token file: %v", err)
	}
}

func TestHTTPNotLoopback(t *testing.T) {
	s, _ := start(t, Config{})
	tok := writeToken(t, shortDir(t), testToken, 0o600)
	for _, a := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.1:27017", "[::ffff:127.0.0.1]:27017", "10.0.0.1:1"} {
		if err := CheckHTTPAddr(netip.MustParseAddrPort(a)); err == nil {
			t.Errorf("%s accepted", a)
		}
		if _, err := s.ListenHTTP(HTTPConfig{Addr: netip.MustParseAddrPort(a), TokenFile: tok}); err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("ListenHTTP %s: %v", a, err)
		}
	}
	for _, a := range []string{"127.0.0.1:27017", "127.3.4.5:1", "[::1]:27017"} {
		if err := CheckHTTPAddr(netip.MustParseAddrPort(a)); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
}

func TestHTTPOverCap(t *testing.T) {
	_, h, _, base := startHTTP(t, Config{}, HTTPConfig{MaxConns: 2})
	// Two connections busy sending a request's body (never finished) hold
	// both slots; the third is refused with a 503 at once.
	addr := h.Addr().String()
	for i := 0; i < 2; i++ {
		c := dialTCP(t, addr)
		io.WriteString(c, "PUT /v1/state HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "+testToken+"\r\nContent-Length: 100\r\n\r\n{")
		waitFor(t, func() bool { all, idle := h.shed.Tracked(); return all == i+1 && idle == 0 })
	}
	c := dialTCP(t, addr)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(c)
	if !bytes.HasPrefix(b, []byte("HTTP/1.1 503")) || !bytes.Contains(b, []byte(`"error":"too many feed HTTP connections (2 open, [feed] http_max_conns); closing"`)) {
		t.Fatalf("over the cap: %q", b)
	}
	if h.Stats().OverCap != 1 {
		t.Fatalf("stats %+v", h.Stats())
	}
	_ = base
}

// dialTCP connects to addr; the connection closes when t ends.
func dialTCP(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
	}
}
