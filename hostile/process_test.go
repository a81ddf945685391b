package hostile

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/sagl"
)

// waitFor polls cond every 50 ms until it holds or limit passes.
func waitFor(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cond()
}

// TestSighupInvalidConfig reloads a good config (it takes effect), then
// several bad ones, hostile ones among them (hostileConfigs: 2 MB, nested
// 100,000 deep): each is rejected in the log and the daemon keeps serving
// the last good one, its peak RSS up by less than 64 MiB.
func TestSighupInvalidConfig(t *testing.T) {
	t.Parallel() // a daemon of its own; it waits on timers and slow clients, not the CPU
	d := StartDaemon(t, nil)
	expectSeen(t, d, "start", "hostile test", "Alice", "Bob")

	d.WriteConfig(t, baseTables(), Tables{"server": {"name": "Reloaded"}})
	d.Signal(t, syscall.SIGHUP)
	if !waitFor(3*time.Second, func() bool { return observe(t, d).name == "Reloaded" }) {
		t.Fatalf("a good config did not take effect on SIGHUP:\n%s", d.Output())
	}

	bad := []struct {
		name string
		text func() []byte
	}{
		{"TOML syntax error", func() []byte { return []byte("[listen\nudp = 1\n") }},
		{"bad limit", func() []byte {
			d.WriteConfig(t, baseTables(), Tables{"server": {"name": "Broken"}, "limits": {"per_ip_rate": "lots"}})
			return nil
		}},
		{"unknown key", func() []byte {
			d.WriteConfig(t, baseTables(), Tables{"server": {"name": "Broken"}, "a2s": {"enabeld": true}})
			return nil
		}},
		{"bad [server] value", func() []byte {
			d.WriteConfig(t, baseTables(), Tables{"server": {"name": "Broken", "max_players": -1}})
			return nil
		}},
		{"config file removed", func() []byte {
			os.Remove(d.ConfigPath)
			return nil
		}},
	}
	for _, h := range hostileConfigs() {
		bad = append(bad, struct {
			name string
			text func() []byte
		}{h.name, func() []byte { return h.text }})
	}
	_, peakBefore := d.RSS(t)
	for _, b := range bad {
		if text := b.text(); text != nil {
			if err := os.WriteFile(d.ConfigPath, text, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		rejections := strings.Count(d.Output(), "config rejected")
		d.Signal(t, syscall.SIGHUP)
		done := make(chan struct{})
		watch := watchRSS(d.Pid(), peakBefore>>10+1<<20, done) // a guard: 1 GiB more
		rejected := waitFor(3*time.Second, func() bool { return strings.Count(d.Output(), "config rejected") > rejections })
		close(done)
		if (<-watch).killed {
			t.Fatalf("%s: queryd passed 1 GiB more RSS on SIGHUP; killed", b.name)
		}
		if !rejected {
			t.Errorf("%s: no \"config rejected\" in the log after SIGHUP", b.name)
		}
		expectSeen(t, d, "SIGHUP with a config with a "+b.name, "Reloaded", "Alice", "Bob")
		if d.Exited() {
			t.Fatalf("%s: queryd exited", b.name)
		}
	}
	answerAll(t, d, "Reloaded")
	// The hostile configs are refused before they are decoded: the peak RSS
	// barely moves (a race-built daemon; reading 1 MiB and scanning it).
	_, peakAfter := d.RSS(t)
	t.Logf("peak RSS %.1f MiB before the bad configs, %.1f MiB after", float64(peakBefore)/(1<<20), float64(peakAfter)/(1<<20))
	if peakAfter-peakBefore > 64<<20 {
		t.Errorf("the bad configs raised the peak RSS by %d MiB (%d -> %d); want under 64 MiB", (peakAfter-peakBefore)>>20, peakBefore>>20, peakAfter>>20)
	}
}

// TestSigtermUnderLoad stops the daemon while sources flood it and a feeder
// patches: it exits with status 0 within 2 s and removes the feed socket.
func TestSigtermUnderLoad(t *testing.T) {
	d := StartDaemon(t, nil)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sent atomic.Int64
	reqs := unprovenRequests()
	for w := 0; w < 4; w++ {
		src := NewSource(t, sourceIP(5, w), d.UDPAddr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := newPacer(2000)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p.Wait(i)
				if src.Send(reqs[i%len(reqs)].Bytes) == nil {
					sent.Add(1)
				}
			}
		}()
	}
	fc := d.Feed(t)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := fc.Patch(map[string]any{"rules": map[string]any{"n": i}}); err != nil {
				return // the daemon has gone
			}
		}
	}()
	time.Sleep(time.Second)
	took, err := d.Terminate(t, 2*time.Second)
	close(stop)
	wg.Wait()
	t.Logf("SIGTERM under load (%d datagrams sent, a feeder patching): exited in %v with %v", sent.Load(), took.Round(time.Millisecond), err)
	if err != nil {
		t.Errorf("exit after SIGTERM: %v; want status 0", err)
	}
	if took > 2*time.Second {
		t.Errorf("exit took %v; want < 2 s", took)
	}
	if _, err := os.Lstat(d.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("feed socket still there after exit: %v", err)
	}
	if strings.Contains(d.Output(), "DATA RACE") {
		t.Errorf("data race reported")
	}

}

// TestSocketPathOccupied puts a regular file where the feed socket goes:
// queryd refuses to start, says why, and leaves the file alone.
func TestSocketPathOccupied(t *testing.T) {
	t.Parallel() // a refused start
	d := newDaemon(t, nil)
	content := []byte("precious data, not a socket\n")
	if err := os.WriteFile(d.Socket, content, 0o640); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, querydBin, "-config", d.ConfigPath)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("queryd with a regular file at the socket path: %v; want a non-zero exit\n%s", err, out.String())
	}
	msg := out.String()
	if !strings.Contains(msg, d.Socket) || !strings.Contains(msg, "regular file") {
		t.Errorf("the error does not name the path and what is there:\n%s", msg)
	}
	got, err := os.ReadFile(d.Socket)
	if err != nil || !bytes.Equal(got, content) {
		t.Errorf("the file at the socket path changed: %q, %v", got, err)
	}
	t.Logf("exit status %d: %s", ee.ExitCode(), strings.TrimSpace(msg))
}

// TestRestartWhileQuerying restarts the daemon while a client queries it
// ten times a second: tokens from the old process are refused and answered
// with a new challenge, and the client recovers by itself.
func TestRestartWhileQuerying(t *testing.T) {
	t.Parallel() // a daemon of its own; it waits on timers and slow clients, not the CPU
	skipShort(t, "a restart under 10 queries a second")
	d := StartDaemon(t, nil)
	old := a2sChallenge(t, d)
	saglOld := saglChallenge(t, d)

	c, err := a2s.Dial(d.UDPAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Timeout = 300 * time.Millisecond
	if _, err := c.Info(); err != nil {
		t.Fatalf("before the restart: %v", err)
	}
	type result struct {
		at time.Time
		ok bool
	}
	var mu sync.Mutex
	var results []result
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			_, err := c.Info()
			mu.Lock()
			results = append(results, result{time.Now(), err == nil})
			mu.Unlock()
		}
	}()
	time.Sleep(500 * time.Millisecond)
	if took, err := d.Terminate(t, 2*time.Second); err != nil {
		t.Fatalf("stop for the restart: %v after %v", err, took)
	}
	d.Start(t)
	restarted := time.Now()
	time.Sleep(1200 * time.Millisecond)
	close(stop)
	<-done

	// The old tokens: A2S answers a new challenge, SAGL too.
	reply := rawAsk(t, d, a2sReq('T', []byte("Source Engine Query\x00"), le32(old)))
	if len(reply) != 9 || reply[4] != 'A' || binary.LittleEndian.Uint32(reply[5:]) == old {
		t.Errorf("A2S_INFO with the old process's token: % X; want a new 9-byte challenge", reply)
	}
	reply = rawAsk(t, d, sagl.AppendRequest(nil, sagl.Request{Kind: sagl.KindInfo, Token: saglOld}))
	if len(reply) != sagl.ChallengeSize || binary.LittleEndian.Uint32(reply[8:]) == saglOld {
		t.Errorf("SAGL info with the old process's token: % X; want a new 12-byte challenge", reply)
	}

	mu.Lock()
	defer mu.Unlock()
	var after, afterOK, lost int
	for _, r := range results {
		if !r.ok {
			lost++
		}
		if r.at.After(restarted.Add(500 * time.Millisecond)) {
			after++
			if r.ok {
				afterOK++
			}
		}
	}
	t.Logf("restart: the client made %d queries, %d unanswered (while no process listened); %d from 0.5 s after the restart on, %d answered",
		len(results), lost, after, afterOK)
	if after == 0 || afterOK != after {
		t.Errorf("after the restart the same client got %d of %d queries answered; want all (its old token re-challenged)", afterOK, after)
	}
}

// a2sChallenge asks for an A2S challenge from 127.0.0.1 and returns the token.
func a2sChallenge(t testing.TB, d *Daemon) uint32 {
	t.Helper()
	reply := rawAsk(t, d, a2sReq('U', le32(0xFFFFFFFF)))
	if len(reply) != 9 || reply[4] != 'A' {
		t.Fatalf("A2S challenge: % X", reply)
	}
	return binary.LittleEndian.Uint32(reply[5:])
}

// saglChallenge asks for a SAGL challenge from 127.0.0.1 and returns the token.
func saglChallenge(t testing.TB, d *Daemon) uint32 {
	t.Helper()
	reply := rawAsk(t, d, sagl.AppendRequest(nil, sagl.Request{Kind: sagl.KindInfo}))
	if len(reply) != sagl.ChallengeSize {
		t.Fatalf("SAGL challenge: % X", reply)
	}
	return binary.LittleEndian.Uint32(reply[8:])
}

// rawAsk sends req from 127.0.0.1 and returns the first reply datagram.
func rawAsk(t testing.TB, d *Daemon, req []byte) []byte {
	t.Helper()
	c, err := net.Dial("udp4", d.UDPAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 65536)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("no reply to % X: %v", req, err)
	}
	return buf[:n]
}

// TestSighupRightAfterReady sends SIGHUP the moment /healthz first answers
// (a supervisor that reloads as soon as the daemon looks ready), 8 times:
// the daemon must reload, not die of the signal's default action (it did
// every time before its handlers were installed ahead of the listeners).
// Under -short, 2 times.
func TestSighupRightAfterReady(t *testing.T) {
	t.Parallel() // process starts, one after the other
	client := &http.Client{Timeout: time.Second}
	attempts := 8
	if testing.Short() {
		attempts = 2
	}
	for i := 0; i < attempts; i++ {
		d := newDaemon(t, nil)
		cmd := exec.Command(querydBin, "-config", d.ConfigPath)
		cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0") // no 1 s sleep at exit in the race build
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			resp, err := client.Get("http://" + d.AdminAddr + "/healthz")
			if err == nil {
				resp.Body.Close()
				break
			}
		}
		cmd.Process.Signal(syscall.SIGHUP)
		time.Sleep(200 * time.Millisecond)
		cmd.Process.Signal(syscall.SIGTERM)
		err := cmd.Wait()
		if err != nil {
			t.Fatalf("attempt %d: SIGHUP right after /healthz answered: %v (want a reload, then exit 0 on SIGTERM)\n%s", i+1, err, out.String())
		}
	}
}
