package relay

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/testkit"
)

func TestCommandOf(t *testing.T) {
	for in, want := range map[string]string{
		"\xFF\xFF\xFF\xFFgetstatus":                  "getstatus",
		"\xFF\xFF\xFF\xFFgetstatus\n":                "getstatus",
		"\xFF\xFF\xFF\xFFgetChallenge 12345":         "getChallenge",
		"\xFF\xFF\xFF\xFFinfoResponse\n\\a\\b":       "infoResponse",
		"\xFF\xFF\xFF\xFFstatusResponse\n":           "statusResponse",
		"\xFF\xFF\xFF\xFFget\x00status":              "get",
		"\xFF\xFF\xFF\xFF" + strings.Repeat("a", 40): strings.Repeat("a", 32),
		"\xFF\xFF\xFF\xFF":                           "connectionless",
		"\xFF\xFF\xFF\xFF\n":                         "connectionless",
		"\xFF\xFF\xFF\xFF\xC3\xA9t\xC3\xA9":          "connectionless",
		"\xFF\xFF\xFF\xFF\\status\\":                 "connectionless",
		"\xFF\xFF\xFF":                               "game",
		"\xFF\xFF\xFF\xFEgetinfo":                    "game",
		"":                                           "game",
		"\\status\\":                                 "game",
		"\x01\x00\x00\x00\x00\x00\x00\x00\x00":       "game",
	} {
		if got := commandOf([]byte(in)); got != want {
			t.Errorf("commandOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzCommandOf(f *testing.F) {
	for _, s := range []string{"\xFF\xFF\xFF\xFFgetstatus\n", "\xFF\xFF\xFF\xFF", "game", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		got := commandOf(p)
		switch {
		case got == "game":
			if bytes.HasPrefix(p, []byte("\xFF\xFF\xFF\xFF")) {
				t.Fatalf("%q: game", p)
			}
		case got == "connectionless":
			if !bytes.HasPrefix(p, []byte("\xFF\xFF\xFF\xFF")) || len(p) > 4 && commandByte(p[4]) {
				t.Fatalf("%q: connectionless", p)
			}
		case len(got) > maxCommand || !bytes.HasPrefix(p, []byte("\xFF\xFF\xFF\xFF"+got)):
			t.Fatalf("%q: %q", p, got)
		}
	})
}

func debugLogger(w *testkit.Buffer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

// q3Game is a fake Quake 3 server on loopback answering every datagram
// with a statusResponse.
func q3Game(t *testing.T) netip.AddrPort {
	t.Helper()
	c := listenLoopback(t)
	go func() {
		buf := make([]byte, 65535)
		for {
			_, src, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			c.WriteToUDPAddrPort([]byte("\xFF\xFF\xFF\xFFstatusResponse\n\\sv_hostname\\game\n"), src)
		}
	}()
	return udpAddr(c)
}

// waitLines waits up to 3 s for the log to hold n lines with message msg.
func waitLines(t *testing.T, w *testkit.Buffer, msg string, n int) []map[string]any {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var got []map[string]any
		for _, l := range w.JSONLines(t) {
			if l["msg"] == msg {
				got = append(got, l)
			}
		}
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d %q lines after 3 s, want %d; log:\n%s", len(got), msg, n, w.String())
		}
	}
}

// At debug level every relayed datagram is one line (client, direction,
// the Quake 3 command or "game", size), and a session's start one line
// with the active count.
func TestRelayDebugLog(t *testing.T) {
	var w testkit.Buffer
	r, _ := newTestRelay(t, Config{GameServer: q3Game(t), Logger: debugLogger(&w, slog.LevelDebug)})
	pub := publicFront(t, r)
	c := listenLoopback(t)
	client := c.LocalAddr().String()
	ask(t, c, pub, []byte("\xFF\xFF\xFF\xFFgetstatus"))
	ask(t, c, pub, []byte("\x01\x02in-game"))

	open := waitLines(t, &w, "relay: session +", 1)
	if open[0]["client"] != client || open[0]["active"] != 1.0 {
		t.Errorf("session line %v", open[0])
	}
	var got []string
	for _, l := range waitLines(t, &w, "relay: datagram", 4) {
		if l["client"] != client {
			t.Errorf("line %v: want client %s", l, client)
		}
		got = append(got, l["dir"].(string)+" "+l["what"].(string)+" "+jsonInt(l["bytes"]))
	}
	want := []string{"upstream getstatus 13", "downstream statusResponse 37", "upstream game 9", "downstream statusResponse 37"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("datagram lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func jsonInt(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Above debug level nothing is logged.
func TestRelayNoDebugLogAtInfo(t *testing.T) {
	var w testkit.Buffer
	r, _ := newTestRelay(t, Config{GameServer: q3Game(t), Logger: debugLogger(&w, slog.LevelInfo)})
	pub := publicFront(t, r)
	ask(t, listenLoopback(t), pub, []byte("\xFF\xFF\xFF\xFFgetstatus"))
	if l := w.JSONLines(t); len(l) != 0 {
		t.Errorf("at info level: %v", l)
	}
}

// A flood of datagrams logs at most DebugLinesPerSecond lines a second
// (after a burst of as many); the next line allowed is preceded by the
// number of lines suppressed, so that every line asked for is either
// logged or counted.
func TestRelayDebugLogRateLimited(t *testing.T) {
	var w testkit.Buffer
	game := listenLoopback(t)
	game.SetReadBuffer(4 << 20)
	r, _ := newTestRelay(t, Config{GameServer: udpAddr(game), Logger: debugLogger(&w, slog.LevelDebug)})
	src := netip.MustParseAddrPort("127.0.0.1:43101")
	const flood = 1000
	asked := 1 // the session's line
	start := time.Now()
	for i := 0; i < flood && time.Since(start) < 5*time.Second; i++ {
		r.Forward([]byte("\xFF\xFF\xFF\xFFgetstatus"), src, netip.Addr{}, nopSender)
		asked++
	}
	took := time.Since(start)
	// logged counts the lines asked for that were logged; suppressed sums
	// the summaries' counts.
	count := func() (logged, suppressed, summaries int) {
		for _, l := range w.JSONLines(t) {
			if l["msg"] == "relay: debug lines suppressed" {
				suppressed += int(l["lines"].(float64))
				summaries++
			} else {
				logged++
			}
		}
		return
	}
	logged, _, before := count()
	if most := DebugLinesPerSecond + 1 + int(took.Seconds()*DebugLinesPerSecond) + 1; logged > most {
		t.Fatalf("%d datagrams in %v logged %d lines, want at most %d", asked-1, took, logged, most)
	}
	if logged < DebugLinesPerSecond {
		t.Fatalf("%d lines logged, want the burst of %d", logged, DebugLinesPerSecond)
	}
	// Once the bucket has a token again, the next line comes with a
	// summary: then every line asked for is logged or counted.
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no suppressed-lines summary within 3 s")
		}
		r.Forward([]byte("x"), src, netip.Addr{}, nopSender)
		asked++
		if _, _, n := count(); n > before {
			break
		}
	}
	if logged, suppressed, _ := count(); logged+suppressed != asked || suppressed < flood-logged {
		t.Errorf("%d lines asked for: %d logged, %d counted as suppressed", asked, logged, suppressed)
	}
}

// Forwarding in an open session allocates nothing with the logger above
// debug (the debug log is one bool test then).
func TestRelayForwardAllocsInfoLogger(t *testing.T) {
	var w testkit.Buffer
	game := listenLoopback(t)
	game.SetReadBuffer(4 << 20)
	r, _ := newTestRelay(t, Config{GameServer: udpAddr(game), Logger: debugLogger(&w, slog.LevelInfo)})
	src := netip.MustParseAddrPort("127.0.0.1:43102")
	req := []byte("\xFF\xFF\xFF\xFFgetstatus")
	r.Forward(req, src, netip.Addr{}, nopSender)
	if n := testing.AllocsPerRun(1000, func() { r.Forward(req, src, netip.Addr{}, nopSender) }); n != 0 {
		t.Errorf("Forward at info level: %v allocations; want 0", n)
	}
}
