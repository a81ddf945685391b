package feed

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawRequest writes head (request line and headers, without the blank
// line) and a first byte of a declared body, and reads the answer's status
// line; it returns the status code, whether it says Connection: close and
// how long the answer took.
func rawRequest(t *testing.T, addr, head string) (int, bool, time.Duration) {
	t.Helper()
	c := dialTCP(t, addr)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	io.WriteString(c, head+"\r\nContent-Length: 1000\r\n\r\n{")
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", head, err)
	}
	res.Body.Close()
	took := time.Since(start)
	// and the connection is closed: a read ends at once
	buf := make([]byte, 1)
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Read(buf); err == nil {
		t.Errorf("%q: the connection stays open after the refusal", head)
	}
	return res.StatusCode, res.Close, took
}

// A request without the token, or with a Host no local client sends, is
// answered as soon as its headers are in (401, 421), Connection: close,
// its declared body never waited for (before, net/http read it for up to
// line_timeout before the 401 went out), and the connection closed.
func TestHTTPRefusedBeforeBody(t *testing.T) {
	_, h, _, _ := startHTTP(t, Config{LineTimeout: 5 * time.Second}, HTTPConfig{})
	addr := h.Addr().String()
	for _, c := range []struct {
		head string
		code int
	}{
		{"PUT /v1/state HTTP/1.1\r\nHost: 127.0.0.1", 401},
		{"PUT /v1/state HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer wrong-token-wrong-token", 401},
		{"POST /v1/ping HTTP/1.1\r\nHost: rebind.attacker.example\r\nAuthorization: Bearer " + testToken, 421},
		{"GET /v1/state HTTP/1.1\r\nHost: queryd.example\r\nAuthorization: Bearer " + testToken, 421},
	} {
		code, conn, took := rawRequest(t, addr, c.head)
		if code != c.code || !conn || took > time.Second {
			t.Errorf("%q: %d, Connection: close %v, after %v; want %d, close, at once", c.head, code, conn, took, c.code)
		}
	}
}

// The Bearer scheme's name is case-insensitive (RFC 7235); the Host may be
// an IP address or localhost, with or without the port.
func TestHTTPBearerAnyCase(t *testing.T) {
	_, h, _, base := startHTTP(t, Config{}, HTTPConfig{})
	for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
		req, _ := http.NewRequest("POST", base+"/v1/ping", nil)
		req.Header.Set("Authorization", scheme+" "+testToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Errorf("%s: %d", scheme, res.StatusCode)
		}
	}
	_, port, _ := strings.Cut(h.Addr().String(), ":")
	for _, host := range []string{"localhost", "localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port} {
		req, _ := http.NewRequest("POST", base+"/v1/ping", nil)
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+testToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Errorf("Host %s: %d", host, res.StatusCode)
		}
	}
	if got := h.Stats().Responses; got["421"] != 0 {
		t.Errorf("responses %v", got)
	}
}

// Connections trickling a request without the token are shed for new ones
// (they prove nothing), so the game server gets through the cap at once;
// its own connection, proven by its token, is kept while busy.
func TestHTTPTricklersShed(t *testing.T) {
	_, h, _, base := startHTTP(t, Config{LineTimeout: 10 * time.Second}, HTTPConfig{MaxConns: 4})
	addr := h.Addr().String()
	for i := 0; i < 8; i++ { // headers never finished
		c := dialTCP(t, addr)
		io.WriteString(c, "PUT /v1/state HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
	}
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	if a := do(t, "POST", base+"/v1/ping", testToken, "", ""); a.code != 200 {
		t.Fatalf("the game server's ping beside 8 tricklers: %d %+v", a.code, a.rep)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("the ping took %v", took)
	}
	if s := h.Stats(); s.Shed == 0 || s.Open > 4 {
		t.Errorf("stats %+v: want tricklers shed, at most 4 open", s)
	}
}
