package responder_test

import (
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/internal/testkit"
	"github.com/queryd/queryd/responder"
)

// unclaimedServer runs a responder with no handler (every datagram is
// unclaimed) and no relay, logging JSON at level into w.
// logLines returns the JSON log lines with message prefix msg.
func logLines(t *testing.T, w *testkit.Buffer, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range w.JSONLines(t) {
		if s, _ := m["msg"].(string); strings.HasPrefix(s, msg) {
			out = append(out, m)
		}
	}
	return out
}

func unclaimedServer(t *testing.T, layer responder.SocketLayer, level slog.Level, w *testkit.Buffer) (*responder.Server, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	s, err := responder.New(responder.Config{
		Listen:   []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:0")},
		Socket:   layer,
		Workers:  1,
		Logger:   slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})),
		Registry: reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() { s.Close() })
	return s, reg
}

// What clients try that no protocol claims: a Minecraft Bedrock ping, a
// Quake 2 status, a GameSpy 1 status.
var unclaimed = [][]byte{
	append([]byte{0x01, 0, 0, 0, 0, 0, 0, 0, 1, 0x00, 0xFF, 0xFF, 0x00, 0xFE, 0xFE, 0xFE, 0xFE, 0xFD, 0xFD, 0xFD, 0xFD, 0x12, 0x34, 0x56, 0x78}, make([]byte, 8)...),
	[]byte("\xFF\xFF\xFF\xFFstatus\n"),
	[]byte(`\status\`),
}

// waitUnknown waits up to 3 s for n datagrams counted as unknown.
func waitUnknown(t *testing.T, reg *prometheus.Registry, n float64) {
	t.Helper()
	f := &fixture{reg: reg}
	for deadline := time.Now().Add(3 * time.Second); f.count(t, "unknown", "unknown") < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%v datagrams counted as unknown after 3 s, want %v", f.count(t, "unknown", "unknown"), n)
		}
	}
}

// At debug level, unclaimed datagrams are sampled into the log, at most
// one line a second: the source, the size and the first 16 bytes in hex;
// the next line says how many were not logged meanwhile.
func TestUnclaimedDebugLog(t *testing.T) {
	for _, layer := range layers {
		t.Run(string(layer), func(t *testing.T) {
			var w testkit.Buffer
			s, reg := unclaimedServer(t, layer, slog.LevelDebug, &w)
			c := clientConn(t, "127.0.0.1:0")
			for _, p := range unclaimed {
				c.WriteToUDPAddrPort(p, s.Addrs()[0])
			}
			waitUnknown(t, reg, float64(len(unclaimed)))
			lines := logLines(t, &w, "unclaimed datagram")
			if len(lines) != 1 {
				t.Fatalf("%d lines for %d unclaimed datagrams at once, want 1: %v", len(lines), len(unclaimed), lines)
			}
			l := lines[0]
			want := map[string]any{
				"src": c.LocalAddr().String(), "bytes": float64(len(unclaimed[0])),
				"head": "01000000000000000100ffff00fefefe", "not_logged_since_last": 0.0,
			}
			for k, v := range want {
				if l[k] != v {
					t.Errorf("%s = %v, want %v (line %v)", k, l[k], v, l)
				}
			}
			// A second later the next unclaimed datagram is logged, with
			// the count of those that were not.
			for deadline := time.Now().Add(3 * time.Second); len(logLines(t, &w, "unclaimed datagram")) < 2; time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("no second line within 3 s")
				}
				c.WriteToUDPAddrPort(unclaimed[1], s.Addrs()[0])
			}
			l = logLines(t, &w, "unclaimed datagram")[1]
			if l["head"] != "ffffffff7374617475730a" || l["not_logged_since_last"].(float64) < float64(len(unclaimed)-1) {
				t.Errorf("second line %v, want the Quake 2 status and at least %d not logged", l, len(unclaimed)-1)
			}
		})
	}
}

// Above debug level no unclaimed datagram is logged.
func TestUnclaimedNoLogAtInfo(t *testing.T) {
	var w testkit.Buffer
	s, reg := unclaimedServer(t, responder.SocketBatch, slog.LevelInfo, &w)
	c := clientConn(t, "127.0.0.1:0")
	for _, p := range unclaimed {
		c.WriteToUDPAddrPort(p, s.Addrs()[0])
	}
	waitUnknown(t, reg, float64(len(unclaimed)))
	if l := logLines(t, &w, "unclaimed"); len(l) != 0 {
		t.Errorf("logged at info level: %v", l)
	}
}
