package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/feed"
)

// startDemoDaemon runs the embedded demo config (every protocol it enables)
// on loopback: only the listen address, the feed socket and the admin
// listener are moved.
func startDemoDaemon(t *testing.T) *daemontest.Daemon {
	t.Helper()
	cfg, err := config.Parse(config.Default, configModules()...)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Listen.UDP = config.AddrPorts{netip.MustParseAddrPort("127.0.0.1:0")}
	cfg.Feed.Socket = filepath.Join(testDir(t), "feed.sock")
	cfg.Admin.Listen = netip.AddrPort{}
	d := daemontest.StartConfig(t, daemonModules(), cfg, "")
	t.Cleanup(func() { d.Stop() })
	return d
}

// TestQueryAutoDemoConfig: auto mode shows every protocol the demo config
// enables, as JSON (the default) and as a table.
func TestQueryAutoDemoConfig(t *testing.T) {
	d := startDemoDaemon(t)
	addr := d.UDP().String()
	demo := d.Snapshot() // the demo config's [server]
	enabled := d.Protocols()
	if len(enabled) != len(modules) {
		t.Fatalf("the demo config enables %v, want every protocol", enabled)
	}

	code, out, errOut := run(t, "", "query", "-timeout", "3s", addr)
	if code != 0 {
		t.Fatalf("auto: %d %s", code, errOut)
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("auto output is not JSON: %v\n%s", err, out)
	}
	var rows []summaryRow
	if err := json.Unmarshal(res["summary"], &rows); err != nil || len(rows) != len(enabled) {
		t.Fatalf("summary %s: %v", res["summary"], err)
	}
	for i, p := range enabled {
		r := rows[i]
		if res[p] == nil || r.Protocol != p || r.Name != demo.Name || r.Error != "" ||
			r.Players == nil || *r.Players != 2 || r.MaxPlayers == nil || *r.MaxPlayers != 16 || r.RTTms == nil {
			t.Errorf("%s: summary %+v, answer %.60s", p, r, res[p])
		}
		if p != "sagl" && r.Map != demo.Map {
			t.Errorf("%s: map %q, want %q", p, r.Map, demo.Map)
		}
	}
	if res["errors"] != nil {
		t.Errorf("errors: %s", res["errors"])
	}

	code, out, errOut = run(t, "", "query", "-table", "-timeout", "3s", addr)
	if code != 0 {
		t.Fatalf("table: %d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1+len(enabled) || !strings.HasPrefix(lines[0], "PROTOCOL") || !strings.Contains(lines[0], "ROUND TRIP") {
		t.Fatalf("table:\n%s", out)
	}
	for i, p := range enabled {
		f := strings.Fields(lines[1+i])
		if f[0] != p || !strings.Contains(lines[1+i], demo.Name) || !strings.Contains(lines[1+i], " 2/16 ") || f[len(f)-1] != "ms" {
			t.Errorf("table row %q", lines[1+i])
		}
	}
}

func TestQueryUsage(t *testing.T) {
	for _, args := range [][]string{
		{"query", "-json", "-table", "127.0.0.1:1"},
		{"query", "-timeout", "0s", "127.0.0.1:1"},
		{"query"},
	} {
		if code, _, _ := run(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// TestQueryWithoutPort: an address without a port is refused in one line
// saying to give HOST:PORT, before anything is sent (it used to print one
// "bad answer: … missing port in address" line per protocol and exit 1).
func TestQueryWithoutPort(t *testing.T) {
	for _, args := range [][]string{
		{"query", "127.0.0.1"},
		{"query", "-proto", "a2s", "localhost"},
		{"query", "-table", "::1"},
		{"query", "127.0.0.1:"},
	} {
		code, out, errOut := run(t, "", args...)
		addr := args[len(args)-1]
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 ||
			!strings.Contains(errOut, "give HOST:PORT") || !strings.Contains(errOut, addr) || strings.Contains(errOut, "bad answer") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line saying to give HOST:PORT", args, code, out, errOut)
		}
	}
}

// fakeUDP serves answer on a loopback UDP socket: it gets each request and
// returns the datagrams to send back (none to stay silent).
func fakeUDP(t *testing.T, answer func(req []byte) [][]byte) string {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, src, err := conn.ReadFromUDP(buf)
			if err != nil {
				return
			}
			for _, d := range answer(append([]byte{}, buf[:n]...)) {
				conn.WriteToUDP(d, src)
			}
		}
	}()
	return conn.LocalAddr().String()
}

// a2sChallenge is a 9-byte A2S challenge with token n.
func a2sChallenge(n uint32) []byte {
	return binary.LittleEndian.AppendUint32([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'A'}, n)
}

// TestQueryFailureMessages: each way a server can fail to answer gets its
// own message, and the exit code is 1.
func TestQueryFailureMessages(t *testing.T) {
	var tok uint32
	closed, _ := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	deadAddr := closed.LocalAddr().String()
	closed.Close()
	cases := []struct {
		name, proto, addr, want string
	}{
		{"nothing listens", "a2s", deadAddr, "nothing listens there"},
		{"silent", "a2s", fakeUDP(t, func([]byte) [][]byte { return nil }), "no answer: nothing came back"},
		{"new challenge every time", "a2s", fakeUDP(t, func([]byte) [][]byte {
			tok++
			return [][]byte{a2sChallenge(tok)}
		}), "answered only with challenges"},
		{"challenge, then silence", "sagl", fakeUDP(t, func(req []byte) [][]byte {
			if binary.LittleEndian.Uint32(req[8:]) != 0 {
				return nil // the token is refused: no answer
			}
			return [][]byte{append([]byte("SAGR\x01\x00\x00\x00"), 9, 9, 9, 9)}
		}), "answered only with challenges"},
		{"first answer, then silence", "quake3", fakeUDP(t, func(req []byte) [][]byte {
			if s := string(req[4:]); strings.HasPrefix(s, "getinfo ") {
				return [][]byte{[]byte("\xFF\xFF\xFF\xFFinfoResponse\n\\challenge\\" + s[len("getinfo "):] + "\\hostname\\x")}
			}
			return nil
		}), "answered the first request, then went silent: probably rate limited"},
		{"garbage", "gamespy4", fakeUDP(t, func([]byte) [][]byte { return [][]byte{{0x09, 1}} }), "bad answer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			code, out, errOut := run(t, "", "query", "-proto", c.proto, "-timeout", "600ms", c.addr)
			if code != 1 || out != "" || !strings.Contains(errOut, c.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out, errOut, c.want)
			}
			if took := time.Since(start); took > 900*time.Millisecond {
				t.Fatalf("took %s with -timeout 600ms", took)
			}
			code, out, _ = run(t, "", "query", "-proto", c.proto, "-table", "-timeout", "600ms", c.addr)
			if code != 1 || !strings.Contains(out, c.proto+": "+c.want[:10]) {
				t.Fatalf("-table: exit %d, %q", code, out)
			}
		})
	}
}

// TestQueryRateLimited: a real daemon with a per-IP byte budget too small
// for the whole A2S query answers INFO and PLAYERS, then drops RULES; the
// message names the rate limit.
func TestQueryRateLimited(t *testing.T) {
	dir := testDir(t)
	d := startTestDaemon(t, writeConfig(t, dir, "[limits]\nper_ip_rate = 1\nper_ip_burst = 1500\n"))
	fc, err := feed.Dial(filepath.Join(dir, "feed.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	rules := map[string]any{}
	for i := range 40 {
		rules[fmt.Sprintf("rule_%02d", i)] = strings.Repeat("v", 28) // RULES ≈ 1,500 bytes: with INFO, over the burst
	}
	if _, err := fc.Patch(map[string]any{"rules": rules}); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run(t, "", "query", "-proto", "a2s", "-timeout", "800ms", d.UDP().String())
	if code != 1 || !strings.Contains(errOut, "A2S_RULES") || !strings.Contains(errOut, "probably rate limited") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// TestQueryAutoPartial: in auto mode, protocols that answered are printed
// and those that did not are listed under "errors"; exit 0.
func TestQueryAutoPartial(t *testing.T) {
	d := startTestDaemon(t, writeConfig(t, testDir(t), "[gamespy4]\nenabled = false\n[quake3]\nenabled = false\n"))
	code, out, errOut := run(t, "", "query", "-timeout", "800ms", d.UDP().String())
	var res struct {
		A2S     any               `json:"a2s"`
		SAGL    any               `json:"sagl"`
		Quake3  any               `json:"quake3"`
		Errors  map[string]string `json:"errors"`
		Summary []summaryRow      `json:"summary"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	if res.A2S == nil || res.SAGL == nil || res.Quake3 != nil || len(res.Summary) != len(modules) ||
		!strings.HasPrefix(res.Errors["gamespy4"], "no answer") || !strings.HasPrefix(res.Errors["quake3"], "no answer") {
		t.Fatalf("partial auto answer: %s", out)
	}
}
