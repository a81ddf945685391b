package interop

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/netnstest"
)

// q3Retry is how often a Quake 3 client sends getchallenge again while it
// gets no answer (ioquake3's RETRANSMIT_TIMEOUT).
const q3Retry = 3 * time.Second

// TestSleepDivertOpenArena (issue 41, divert mode): Debian's
// openarena-server (one bot, no players) on the server namespace's
// address, queryd diverting its port ([upstream] quake3, polled on its own
// address) with [sleep] after = "3s", started and stopped by the test's
// scripts (run by queryd in its namespace). It is put to sleep 3 s after
// queryd starts; qstat from the client's namespace reads its name and map
// while its process is gone; 1,000 queries of every protocol (a2s,
// gamespy4, sagl and quake3 on and taken by divert; bedrock and sqp off,
// passed to the game server's address) wake it 0 times and the XDP
// program reports none of them; a Quake 3 client's getchallenge
// (from an unconnected socket, resent every 3 s as ioquake3 does) wakes
// it: nothing is held in divert mode, so the first is lost, and
// OpenArena's challengeResponse reaches the client within ready_timeout
// plus one retry; it sleeps again. Then a spoofed flood of game datagrams
// from 10,000 sources (254 addresses × ports) for 20 s wakes it once,
// wakes_per_hour (2) minus the one wake before: it sleeps again before the
// flood ends, and the wakes asked past the bound are refused; the ring
// buffer never overflows.
func TestSleepDivertOpenArena(t *testing.T) {
	if testing.Short() {
		t.Skip("a real OpenArena server started and stopped behind divert (namespaces, a flood): -short")
	}
	NeedCommand(t, "quakestat")
	n := netnstest.New(t)
	o := newSleepOAAt(t, divertOA.String())
	if out, err := exec.Command("ip", "netns", "exec", n.ServerNS, o.start).CombinedOutput(); err != nil { // it runs when queryd starts
		t.Fatalf("start: %v: %s", err, out)
	}
	if err := netnstest.Do(n.ServerNS, func() error { return waitGetinfo(divertOA, 90*time.Second) }); err != nil {
		t.Fatalf("%v\n%s", err, o.output())
	}
	const readyTimeout = 30 * time.Second
	const wakesPerHour = 2
	opts := divertOptions(n, divertOA, "quake3", map[string]map[string]any{
		"a2s": nil, "gamespy4": nil, "sagl": nil, "quake3": nil,
	})
	opts.Tables["listen"]["divert_protocols"] = []string{"a2s", "gamespy4", "sagl", "quake3"}
	opts.Tables["sleep"] = map[string]any{"after": "3s", "start": []string{o.start}, "stop": []string{o.stop},
		"ready_timeout": readyTimeout.String(), "wakes_per_hour": wakesPerHour}
	d := StartDaemon(t, opts)
	started := time.Now()
	asleepAt := waitAsleep(t, d, 30*time.Second)
	t.Logf("asleep %s after queryd started (after = 3s, the poll every 1s)", asleepAt.Sub(started).Round(100*time.Millisecond))
	if o.running() || o.runs("stop") != 1 {
		t.Fatalf("asleep: OpenArena runs %v, stops %d", o.running(), o.runs("stop"))
	}
	joins := func(result string) float64 {
		return d.Metric(t, fmt.Sprintf(`queryd_xdp_divert_joins_total{result=%q,server="main"}`, result))
	}
	wakes := func() float64 { return d.Metric(t, `queryd_sleep_wakes_total{cause="join",server="main"}`) }

	leave := netnstest.Enter(t, n.ClientNS)
	defer leave()
	netnstest.CheckExec(t, n.ClientNS)
	addr := divertOA.String()
	r := RunCmd(t, 30*time.Second, "", "quakestat", "-q3s", addr, "-R", "-P", "-json", "-nnx")
	var servers []q3QstatServer
	if r.Err != nil || json.Unmarshal([]byte(r.Stdout), &servers) != nil || len(servers) != 1 {
		t.Fatalf("qstat while asleep: %v\n%s", r.Err, r.Stdout)
	}
	s := servers[0]
	if s.Status != "online" || s.Name != "sleepy-oa" || s.Map != "oa_dm1" || s.NumPlayers != 0 || s.MaxPlayers != 12 {
		t.Fatalf("qstat while asleep: %+v", s)
	}
	t.Logf("asleep, OpenArena's process gone: qstat through divert %q on %s %d/%d", s.Name, s.Map, s.NumPlayers, s.MaxPlayers)

	c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netnstest.ClientAddr4, 0)))
	if err != nil {
		t.Fatal(err)
	}
	sent := 0
	for _, req := range allProbes() {
		for i := 0; i < 1000; i++ {
			if _, err := c.WriteToUDP(req, net.UDPAddrFromAddrPort(divertOA)); err != nil {
				t.Fatal(err)
			}
			sent++
			if i%50 == 49 {
				time.Sleep(2 * time.Millisecond)
			}
		}
	}
	c.Close()
	time.Sleep(time.Second)
	if asleep, _ := sleepHealth(t, d); !asleep || o.runs("start") != 1 || wakes() != 0 || joins("reported") != 0 {
		t.Fatalf("%d queries woke it: asleep %v, starts %d, wakes %v, reports %v", sent, asleep, o.runs("start"), wakes(), joins("reported"))
	}
	t.Logf("%d queries (1,000 of each of the 6 protocols, 2 of them off) while asleep: 0 reports, 0 wakes", sent)

	sum0 := d.Metric(t, `queryd_sleep_wake_seconds_sum{server="main"}`)
	took, tries := joinOADivert(t, readyTimeout, o)
	wake := d.Metric(t, `queryd_sleep_wake_seconds_sum{server="main"}`) - sum0
	if o.runs("start") != 2 || wakes() != 1 {
		t.Fatalf("join: starts %d, wakes %v", o.runs("start"), wakes())
	}
	t.Logf("join: the wake took %.2f s (start to OpenArena's first answer); OpenArena's challengeResponse reached the client %v after its first getchallenge, on try %d (one every %s)",
		wake, took, tries, q3Retry)
	waitAsleep(t, d, 60*time.Second) // the client never joins: asleep again
	if o.runs("stop") != 2 || o.running() {
		t.Fatalf("asleep again: stops %d, running %v", o.runs("stop"), o.running())
	}

	before := [3]float64{joins("reported"), joins("rate_limited"), joins("ring_full")}
	refused0 := d.Metric(t, `queryd_sleep_wakes_refused_total{server="main"}`)
	floodSent, floodTook := floodGame(t, divertOA, 10000, 20*time.Second)
	flood := wakes() - 1
	after := [3]float64{joins("reported"), joins("rate_limited"), joins("ring_full")}
	refused := d.Metric(t, `queryd_sleep_wakes_refused_total{server="main"}`) - refused0
	t.Logf("a spoofed flood of %d game datagrams from 10,000 sources in %s: %v wakes (wakes_per_hour %d, 1 before), %v refused; "+
		"the program reported %v, rate-limited %v, ring full %v; held %v datagrams",
		floodSent, floodTook.Round(100*time.Millisecond), flood, wakesPerHour, refused, after[0]-before[0], after[1]-before[1], after[2]-before[2],
		d.Metric(t, `queryd_sleep_held_datagrams{server="main"}`))
	if flood != wakesPerHour-1 || float64(o.runs("start")) != 2+flood || refused < 1 {
		t.Fatalf("the flood: %v wakes, %d starts in all, %v refused: want %d wake, the rest refused", flood, o.runs("start"), refused, wakesPerHour-1)
	}
	if after[0]-before[0] > floodTook.Seconds()*100+1 || after[2] != before[2] {
		t.Fatalf("the flood: %v reports in %s (at most 100 a second), %v lost to a full ring", after[0]-before[0], floodTook, after[2]-before[2])
	}
	waitAsleep(t, d, 60*time.Second)
	if o.running() {
		t.Fatal("asleep after the flood, OpenArena still runs")
	}
}

// waitGetinfo waits up to limit for the Quake 3 server at at to answer
// getinfo (from the calling thread's namespace).
func waitGetinfo(at netip.AddrPort, limit time.Duration) error {
	c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(at))
	if err != nil {
		return err
	}
	defer c.Close()
	buf := make([]byte, 4096)
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		c.Write([]byte("\xFF\xFF\xFF\xFFgetinfo x"))
		c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		if n, err := c.Read(buf); err == nil && bytes.Contains(buf[:n], []byte("infoResponse")) {
			return nil
		}
	}
	return fmt.Errorf("%s did not answer getinfo within %s", at, limit)
}

// joinOADivert is a Quake 3 client's first step from the client's
// namespace: getchallenge to divertOA from an unconnected socket (the
// kernel's port unreachable while nothing listens does not end it), sent
// again every q3Retry until OpenArena's challengeResponse comes; the test
// fails unless it comes within ready_timeout plus one retry. It returns
// how long it took and on which try it came.
func joinOADivert(t *testing.T, readyTimeout time.Duration, o *sleepOA) (time.Duration, int) {
	t.Helper()
	c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netnstest.ClientAddr4, 0)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	to := net.UDPAddrFromAddrPort(divertOA)
	buf := make([]byte, 2048)
	first := time.Now()
	end := first.Add(readyTimeout + q3Retry)
	for try := 1; time.Now().Before(end); try++ {
		if _, err := c.WriteToUDP([]byte("\xFF\xFF\xFF\xFFgetchallenge"), to); err != nil {
			t.Fatal(err)
		}
		next := first.Add(time.Duration(try) * q3Retry)
		c.SetReadDeadline(next)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				break
			}
			if from.AddrPort() == divertOA && strings.HasPrefix(string(buf[:n]), "\xFF\xFF\xFF\xFFchallengeResponse ") {
				return time.Since(first).Round(time.Millisecond), try
			}
		}
	}
	t.Fatalf("getchallenge: no challengeResponse within ready_timeout (%s) and a retry\nOpenArena:\n%s", readyTimeout, o.output())
	return 0, 0
}

// floodGame sends game datagrams (Quake 3 getchallenge) to dst from n
// spoofed sources (netnstest.Spoofed's addresses .1 to .254, each with
// ports from 20000), each once, spread evenly over d, through a raw socket opened in
// the calling thread's namespace (the client's). It returns how many it
// sent and how long it took.
func floodGame(t *testing.T, dst netip.AddrPort, n int, d time.Duration) (int, time.Duration) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, syscall.IPPROTO_RAW)
	if err != nil {
		t.Fatalf("raw socket: %v", err)
	}
	defer syscall.Close(fd)
	sa := &syscall.SockaddrInet4{Addr: dst.Addr().As4()}
	base := netnstest.Spoofed.Addr().As4()
	payload := []byte("\xFF\xFF\xFF\xFFgetchallenge")
	start := time.Now()
	for i := 0; i < n; i++ {
		if wait := time.Until(start.Add(d * time.Duration(i) / time.Duration(n))); wait > 0 {
			time.Sleep(wait)
		}
		a := base
		a[3] = byte(1 + i%254)
		src := netip.AddrPortFrom(netip.AddrFrom4(a), uint16(20000+i/254))
		if !netnstest.Contains(src.Addr()) || !netnstest.Contains(dst.Addr()) {
			t.Fatalf("flood: %s → %s outside the test network", src, dst)
		}
		p := udp4Packet(src, dst, payload)
		for tries := 0; ; tries++ {
			err := syscall.Sendto(fd, p, 0, sa)
			if (errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.EAGAIN)) && tries < 100 {
				time.Sleep(100 * time.Microsecond)
				continue
			}
			if err != nil {
				t.Fatalf("flood: send from %s: %v", src, err)
			}
			break
		}
	}
	return n, time.Since(start)
}

// udp4Packet is an IPv4 header and a UDP datagram from src to dst (the
// kernel fills in the IP checksum and id; the UDP checksum is 0: none).
func udp4Packet(src, dst netip.AddrPort, payload []byte) []byte {
	p := make([]byte, 28, 28+len(payload))
	p[0] = 0x45 // IPv4, 5 words of header
	p[8] = 64   // TTL
	p[9] = syscall.IPPROTO_UDP
	s4, d4 := src.Addr().As4(), dst.Addr().As4()
	copy(p[12:16], s4[:])
	copy(p[16:20], d4[:])
	binary.BigEndian.PutUint16(p[20:], src.Port())
	binary.BigEndian.PutUint16(p[22:], dst.Port())
	binary.BigEndian.PutUint16(p[24:], uint16(8+len(payload)))
	p = append(p, payload...)
	binary.BigEndian.PutUint16(p[2:], uint16(len(p)))
	return p
}
