package main

import (
	"github.com/queryd/queryd/internal/udptest"

	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/sagl"
)

// The built `queryd query` against malicious servers on loopback: each run
// ends by -timeout (plus process start and exit) with the right exit code
// and reason (or answer), and its peak RSS stays under hostileRSS, also for
// valid answers at the SAGL client's caps.

// hostileRSS is the peak resident set the query may reach against any of
// these servers.
const hostileRSS = 64 << 20

// hostileCase is one malicious server and what `queryd query` must say.
// bigTimeout is -timeout for the well-behaved servers of the largest
// answers (a 4 MiB JSON, a 16 MiB logo): they must be read whole within
// the memory bound; how fast is the benchmarks' business, and a loaded CI
// machine takes seconds for what takes 300 ms here.
const bigTimeout = 20 * time.Second

type hostileCase struct {
	name    string
	proto   string
	args    []string // more flags
	serve   func(req []byte, send func([]byte) bool)
	code    int           // the exit code
	timeout time.Duration // -timeout; 0 means 1 s
	want    []string      // in stderr (exit 1) or stdout (exit 0)
}

// saglChallenge is a SAGL challenge with token tok.
func saglChallenge(tok uint32) []byte {
	return sagl.PutChallenge(make([]byte, sagl.ChallengeSize), tok)
}

// saglPart is a SAGL info reply with any header fields and data.
func saglPart(serial, total uint32, part, parts uint16, data []byte) []byte {
	b := []byte("SAGR\x01\x01\x00\x00")
	b = binary.LittleEndian.AppendUint32(b, serial)
	b = binary.LittleEndian.AppendUint32(b, total)
	b = binary.LittleEndian.AppendUint16(b, part)
	b = binary.LittleEndian.AppendUint16(b, parts)
	return append(b, data...)
}

// saglServer answers a token-0 request with a challenge and the others
// with answer(kind, offset).
func saglServer(answer func(kind byte, off uint32) [][]byte) func([]byte) [][]byte {
	return func(req []byte) [][]byte {
		if len(req) != sagl.RequestSize {
			return nil
		}
		if binary.LittleEndian.Uint32(req[8:]) == 0 {
			return [][]byte{saglChallenge(77)}
		}
		return answer(req[5], binary.LittleEndian.Uint32(req[12:]))
	}
}

// replies adapts a server that answers each request with datagrams.
func replies(answer func(req []byte) [][]byte) func([]byte, func([]byte) bool) {
	return func(req []byte, send func([]byte) bool) {
		for _, d := range answer(req) {
			send(d)
		}
	}
}

// sendPaced sends n datagrams made by next (i from 0), batch at a time
// with 0.5 ms between, until n are sent, stop passes or send fails. A batch
// should fit a socket's default receive buffer (208 KiB, counting about
// 2.3 KB for a 1,200-byte datagram, 64 KB for one of 60 KB).
func sendPaced(send func([]byte) bool, n, batch int, next func(i int) []byte, stop time.Time) {
	for i := 0; i < n && time.Now().Before(stop) && send(next(i)); i++ {
		if i%batch == batch-1 {
			time.Sleep(500 * time.Microsecond)
		}
	}
}

// pacedFlood answers the first request with n datagrams made by next into
// a reused buffer, paced so that a client keeping them all would grow by up
// to 360 MB/s, for at most 2 s; it answers nothing else.
func pacedFlood(n int, next func(i int, buf []byte) []byte) func([]byte, func([]byte) bool) {
	started := false
	return func(_ []byte, send func([]byte) bool) {
		if started {
			return
		}
		started = true
		buf := make([]byte, 65000)
		sendPaced(send, n, 3, func(i int) []byte { return next(i, buf) }, time.Now().Add(2*time.Second))
	}
}

// saglPaced is a well-behaved SAGL server of the JSON js and the logo: a
// challenge for token 0, then every part of js, paced so that none is lost
// on loopback, and each logo piece asked for.
func saglPaced(js []byte, logo *sagl.Logo) func([]byte, func([]byte) bool) {
	parts := sagl.EncodeParts(js, 3)
	return func(req []byte, send func([]byte) bool) {
		switch {
		case len(req) != sagl.RequestSize:
		case binary.LittleEndian.Uint32(req[8:]) == 0:
			send(saglChallenge(77))
		case req[5] == sagl.KindLogo:
			send(sagl.AppendLogoPiece(nil, logo, binary.LittleEndian.Uint32(req[12:])))
		default:
			sendPaced(send, len(parts), 32, func(i int) []byte { return parts[i] }, time.Now().Add(2*time.Second))
		}
	}
}

// atTheCaps is a valid SAGL JSON of MaxItems items, most of them members
// of one object (the costliest to decode and print per byte).
func atTheCaps() []byte {
	b := []byte(`{"query":1,"values":{`)
	for i := range sagl.MaxItems - 4 { // the object, "query", "values", its object
		if i > 0 {
			b = append(b, ',')
		}
		b = append(strconv.AppendQuote(b, strconv.FormatInt(int64(i), 36)), ":0"...)
	}
	return append(b, "}}"...)
}

// a2sSplitFlood answers every request with 500 split fragments, each of
// another reply that never completes: 5,000 in all.
func a2sSplitFlood() func([]byte) [][]byte {
	var sent atomic.Int32
	return func([]byte) [][]byte {
		var out [][]byte
		for i := 0; i < 500 && sent.Add(1) <= 5000; i++ {
			d := make([]byte, 1400)
			copy(d, []byte{0xFE, 0xFF, 0xFF, 0xFF})
			binary.LittleEndian.PutUint32(d[4:], uint32(sent.Load()))
			d[8], d[9] = 255, 0
			out = append(out, d)
		}
		return out
	}
}

// a2sStaleSplits answers INFO with its split reply twice (a duplicate),
// PLAYER and RULES with theirs, split with other ids.
func a2sStaleSplits() func([]byte) [][]byte {
	info := []byte{0xFF, 0xFF, 0xFF, 0xFF, a2s.ReplyInfo, 17}
	for _, s := range []string{strings.Repeat("n", 1500), "stale-map", "folder", "game"} {
		info = append(append(info, s...), 0)
	}
	info = append(binary.LittleEndian.AppendUint16(info, 480), 1, 8, 0, 'd', 'l', 0, 0, '1', 0)
	players := []byte{0xFF, 0xFF, 0xFF, 0xFF, a2s.ReplyPlayer, 60}
	for i := range 60 {
		players = append(append(players, byte(i)), strings.Repeat("p", 30)+"\x00"...)
		players = binary.LittleEndian.AppendUint32(players, uint32(i))
		players = binary.LittleEndian.AppendUint32(players, 0)
	}
	rules := []byte("\xFF\xFF\xFF\xFFE\x01\x00answer\x00fresh\x00")
	return func(req []byte) [][]byte {
		switch req[4] {
		case a2s.TypeInfo:
			return append(a2s.Split(info, 1), a2s.Split(info, 1)...)
		case a2s.TypePlayer:
			return a2s.Split(players, 2)
		case a2s.TypeRules:
			return [][]byte{rules}
		}
		return nil
	}
}

// quake3Stale answers each getinfo or getstatus with a stale reply (another
// challenge), then the answer.
func quake3Stale(req []byte) [][]byte {
	cmd, ch, _ := strings.Cut(string(req[4:]), " ")
	kind := map[string]string{"getinfo": "infoResponse\n", "getstatus": "statusResponse\n"}[cmd]
	return [][]byte{
		[]byte("\xFF\xFF\xFF\xFF" + kind + "\\challenge\\stale\\hostname\\old"),
		[]byte("\xFF\xFF\xFF\xFF" + kind + "\\challenge\\" + ch + "\\hostname\\fresh"),
	}
}

// gs4Handshake answers a GameSpy4 handshake with token text.
func gs4Handshake(token string) func([]byte) [][]byte {
	return func(req []byte) [][]byte {
		return [][]byte{append(append([]byte{0x09}, req[3:7]...), token...)}
	}
}

func hostileCases() []hostileCase {
	var challenges atomic.Uint32
	deep := `{"query":1,"values":{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}}`
	logo := &sagl.Logo{Data: append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 3000)...)}
	logo.Sum[0] = 1 // not its SHA-256
	bigLogo, err := sagl.NewLogo(append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, sagl.MaxLogo-8)...), 0)
	if err != nil {
		panic(err)
	}
	return []hostileCase{
		{name: "sagl parts of 60 KB", proto: "sagl", code: 1, // issue item 1: 1 GiB in 3 s
			serve: pacedFlood(3000, func(i int, buf []byte) []byte {
				copy(buf, saglPart(5, 16<<20, uint16(i), sagl.MaxParts, nil))
				return buf[:sagl.InfoHeader+60000]
			}),
			want: []string{"bad answer: sagl: datagram of 60020 bytes, over the protocol's 1200"}},
		{name: "sagl parts past the total", proto: "sagl", code: 1,
			serve: replies(saglServer(func(byte, uint32) [][]byte {
				var out [][]byte
				for i := range 200 {
					out = append(out, saglPart(5, 2*sagl.PartSize, uint16(i), sagl.MaxParts, make([]byte, sagl.PartSize)))
				}
				return out
			})),
			want: []string{"bad answer: sagl: info parts adding up past the JSON's 2360 bytes"}},
		{name: "sagl new challenge every time", proto: "sagl", code: 1, // issue item 3
			serve: replies(func([]byte) [][]byte { return [][]byte{saglChallenge(challenges.Add(1))} }),
			want:  []string{"answered only with challenges", "sagl: the server answers only with challenges"}},
		{name: "sagl JSON too deep", proto: "sagl", code: 1,
			serve: replies(saglServer(func(byte, uint32) [][]byte { return sagl.EncodeParts([]byte(deep), 3) })),
			want:  []string{"bad answer: sagl: the JSON nests deeper than 64"}},
		{name: "sagl logo SHA-256 mismatch", proto: "sagl", code: 1, args: []string{"-logo", "LOGO"},
			serve: replies(saglServer(func(kind byte, off uint32) [][]byte {
				if kind == sagl.KindLogo {
					return [][]byte{sagl.AppendLogoPiece(nil, logo, off)}
				}
				return sagl.EncodeParts([]byte(`{"query":1,"name":"x"}`), 3)
			})),
			want: []string{"bad answer: logo: sagl: the logo does not match its SHA-256 01000000"}},
		{name: "sagl parts that never complete", proto: "sagl", code: 1,
			serve: replies(saglServer(func(byte, uint32) [][]byte {
				return [][]byte{saglPart(5, 3*sagl.PartSize, 0, 3, make([]byte, sagl.PartSize))}
			})),
			want: []string{"answers a single request but not the whole query", "(1 of 3 parts)"}},
		{name: "gamespy4 token not a number", proto: "gamespy4", code: 1, serve: replies(gs4Handshake("abc\x00")),
			want: []string{`bad answer: basic stat: handshake: gamespy4: token "abc" is not a decimal int32`}},
		{name: "gamespy4 token without NUL", proto: "gamespy4", code: 1, serve: replies(gs4Handshake("123456")),
			want: []string{"bad answer: basic stat: handshake: gamespy4: string without its NUL"}},
		{name: "a2s fragment flood", proto: "a2s", code: 1, serve: replies(a2sSplitFlood()),
			want: []string{"bad answer: A2S_INFO: a2s: incomplete split reply"}},
		{name: "a2s duplicated split reply", proto: "a2s", code: 0, serve: replies(a2sStaleSplits()), // issue item 5
			want: []string{`"map": "stale-map"`, `"name": "pppppppppppppppppppppppppppppp"`, `"answer": "fresh"`}},
		{name: "sagl JSON at the caps", proto: "sagl", code: 0, timeout: bigTimeout,
			serve: saglPaced(atTheCaps(), nil), want: []string{`"query": 1,`, strconv.Quote(strconv.FormatInt(sagl.MaxItems-5, 36)) + ": 0\n"}},
		{name: "sagl JSON of 4 MiB", proto: "sagl", code: 0, timeout: bigTimeout,
			serve: saglPaced([]byte(`{"name":"`+strings.Repeat("x", sagl.MaxJSON-11)+`"}`), nil), want: []string{`"name": "xxxx`}},
		{name: "sagl logo of 16 MiB", proto: "sagl", code: 0, timeout: bigTimeout, args: []string{"-logo", "LOGO"},
			serve: saglPaced([]byte(`{"query":1}`), bigLogo), want: []string{`"query": 1`}},
		{name: "quake3 stale reply first", proto: "quake3", code: 0, serve: replies(quake3Stale),
			want: []string{`"hostname": "fresh"`}},
	}
}

// watchHWM polls a process's peak resident set (VmHWM) every millisecond until
// peak is called, after the process ended; peak returns the last value
// read. (The child's rusage maxrss is no use: Go starts children with
// vfork, so it begins at the test process's own peak.)
func watchHWM(pid int) (peak func() int64) {
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	var hwm atomic.Int64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			if b, err := os.ReadFile(path); err == nil {
				if _, rest, ok := bytes.Cut(b, []byte("VmHWM:")); ok {
					f := strings.Fields(string(rest))
					if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil && len(f) > 1 && f[1] == "kB" {
						hwm.Store(max(hwm.Load(), kb<<10))
					}
				}
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() int64 {
		close(done)
		<-stopped
		return hwm.Load()
	}
}

// TestQueryHostileServers runs the built queryd query against each
// malicious server as a subprocess: the right exit code and reason, in
// time, with a peak RSS (VmHWM) under hostileRSS.
func TestQueryHostileServers(t *testing.T) {
	t.Parallel() // waits on timeouts and processes, not on the CPU
	if testing.Short() {
		t.Skip("builds queryd")
	}
	bin := buildStatic(t)
	for _, c := range hostileCases() {
		t.Run(c.name, func(t *testing.T) {
			timeout := c.timeout
			if timeout == 0 {
				timeout = time.Second
			}
			var first atomic.Int64 // when the server got the client's first datagram (Unix ns)
			addr := udptest.Serve(t, func(req []byte, send func([]byte) bool) {
				first.CompareAndSwap(0, time.Now().UnixNano())
				c.serve(req, send)
			})
			args := append([]string{"query", "-proto", c.proto, "-timeout", timeout.String()}, c.args...)
			for i, a := range args {
				if a == "LOGO" {
					args[i] = filepath.Join(t.TempDir(), "logo.png")
				}
			}
			cmd := exec.Command(bin, append(args, addr)...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			peak := watchHWM(cmd.Process.Pid)
			err := cmd.Wait()
			ended := time.Now()
			took := ended.Sub(start)
			// The client's own time runs from its first datagram: starting
			// the process is not the client's to bound (a second and more on
			// a loaded machine).
			var own time.Duration
			if f := first.Load(); f != 0 {
				own = ended.Sub(time.Unix(0, f))
			}
			code := cmd.ProcessState.ExitCode()
			rss := peak()
			t.Logf("exit %d in %s (%s after its first datagram), peak RSS %.1f MiB: %s", code, took.Round(time.Millisecond), own.Round(time.Millisecond), float64(rss)/(1<<20), strings.TrimSpace(stderr.String()))
			out := stderr.String()
			if c.code == 0 {
				out = stdout.String()
			}
			if code != c.code || (err != nil && code < 0) {
				t.Errorf("exit %d (%v), want %d; stderr %q", code, err, c.code, stderr.String())
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			switch {
			case first.Load() == 0:
				t.Errorf("the server got no datagram from the client")
			case own > timeout+500*time.Millisecond:
				t.Errorf("took %s after its first datagram with -timeout %s", own.Round(time.Millisecond), timeout)
			}
			if rss > hostileRSS || rss == 0 && took > 50*time.Millisecond { // a run of a few ms may end before the first reading
				t.Errorf("peak RSS %d bytes, want 1 to %d", rss, hostileRSS)
			}
		})
	}
}
