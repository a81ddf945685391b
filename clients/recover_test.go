package clients_test

import (
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
)

// The recover tests (issue 38, "feeders recover"): each client's recover
// program (clients/csharp/RecoverTest.cs, clients/cpp/recover_test.cpp,
// clients/godot/example/recover_test.gd, examples/node/recover_test.mjs,
// examples/python/recover_test.py, and recoverGo here for feed.Client) runs
// one timeline: the good state at once, a patch queryd rejects (a score of
// 1.5) after 1 s (unless QUERYD_RECOVER_BAD=0), a good patch (player
// "Later" joins) after 1.5 s, a tick patch every 100 ms, each rejection
// printed as "rejected OP: REPLY". What queryd must answer then is the good
// state with the later player, over A2S.
const (
	recoverName = "recover test"
	recoverMap  = "good_map"
)

var recoverPlayers = []string{"Later 2", "Zoë 3"}

// recoverBack is how soon after queryd listens again the client's state must
// be answered (the "within 2 s").
const recoverBack = 2 * time.Second

// recoverAnswer is what queryd answers over A2S: "name on map: players".
func (d *daemon) recoverAnswer() (string, error) {
	c, err := a2s.Dial(d.UDPAddr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	info, err := c.Info()
	if err != nil {
		return "", fmt.Errorf("A2S_INFO: %w", err)
	}
	ps, err := c.Players()
	if err != nil {
		return "", fmt.Errorf("A2S_PLAYER: %w", err)
	}
	var list []string
	for _, p := range ps {
		list = append(list, p.Name+" "+strconv.Itoa(int(p.Score)))
	}
	sort.Strings(list)
	return fmt.Sprintf("%q on %q: %q", info.Name, info.Map, list), nil
}

var recoverWant = fmt.Sprintf("%q on %q: %q", recoverName, recoverMap, recoverPlayers)

// waitRecovered waits until queryd answers the good state (with the later
// player) over A2S and returns how long that took.
func (d *daemon) waitRecovered(t *testing.T, c *client, what string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	var got string
	var err error
	for time.Since(start) < limit {
		if got, err = d.recoverAnswer(); err == nil && got == recoverWant {
			return time.Since(start)
		}
		if c.exited() {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: queryd does not answer the client's good state within %v: it answers %s (%v), want %s\nclient output:\n%s\nqueryd log:\n%s",
		what, limit, got, err, recoverWant, c.out, d.Output())
	return 0
}

// waitOutput waits until the client has printed want.
func (c *client) waitOutput(t *testing.T, want string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !strings.Contains(c.out.String(), want) {
		if time.Now().After(deadline) || c.exited() {
			t.Fatalf("the client did not print %q within %v:\n%s", want, limit, c.out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitRejected waits until the client has reported queryd's rejection of
// the score 1.5.
func (c *client) waitRejected(t *testing.T, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		for _, l := range strings.Split(c.out.String(), "\n") {
			if strings.HasPrefix(l, "rejected patch: ") && strings.Contains(l, "1.5") {
				return
			}
		}
		if time.Now().After(deadline) || c.exited() {
			t.Fatalf("the client did not report the rejected patch (score 1.5) within %v:\n%s", limit, c.out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// rejections counts the rejections the client reported.
func (c *client) rejections() int {
	n := 0
	for _, l := range strings.Split(c.out.String(), "\n") {
		if strings.HasPrefix(l, "rejected ") {
			n++
		}
	}
	return n
}

// restart stops queryd and starts it again, and returns how long it was down.
func (d *daemon) restart(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	d.Stop()
	d.Start(t)
	return time.Since(start)
}

// recoverStarter starts one client's recover program with env added.
type recoverStarter func(t *testing.T, env []string) *client

// processRecover is a recoverStarter running the command mk makes.
func processRecover(mk func() *exec.Cmd) recoverStarter {
	return func(t *testing.T, env []string) *client { return startClient(t, mk(), env) }
}

// recoverRows runs the three rows for one client:
//
//   - restart: queryd restarted with the game still feeding; the state is
//     back within 2 s of queryd listening again.
//   - bad-patch-then-restart: the good state, a patch queryd rejects and
//     the client reports, a good patch after it, then queryd restarted: the
//     good state with the later patch arrives (within 2 s), not the
//     rejected value and not [server].
//   - bad-patch-before-connect: the same three calls before queryd runs;
//     once it starts, the good state arrives and the rejection is reported.
func recoverRows(t *testing.T, start recoverStarter) {
	t.Helper()
	t.Run("restart", func(t *testing.T) {
		t.Parallel()
		d := newDaemon(t)
		d.Start(t)
		c := start(t, append(d.env(), "QUERYD_RECOVER_BAD=0"))
		d.waitRecovered(t, c, "first feed", 60*time.Second)
		time.Sleep(300 * time.Millisecond) // ticks go on
		down := d.restart(t)
		took := d.waitRecovered(t, c, "after queryd restarted", 30*time.Second)
		t.Logf("queryd down for %v; the state answered again %v after it listened", down.Round(time.Millisecond), took.Round(time.Millisecond))
		if took > recoverBack {
			t.Errorf("the state came back %v after queryd listened again, want within %v", took.Round(time.Millisecond), recoverBack)
		}
	})
	t.Run("bad-patch-then-restart", func(t *testing.T) {
		t.Parallel()
		d := newDaemon(t)
		d.Start(t)
		c := start(t, d.env())
		c.waitOutput(t, "later", 60*time.Second)
		c.waitRejected(t, 30*time.Second)
		d.waitRecovered(t, c, "before the restart", 30*time.Second)
		down := d.restart(t)
		took := d.waitRecovered(t, c, "after a rejected patch and a queryd restart", 30*time.Second)
		t.Logf("queryd down for %v; the good state answered again %v after it listened", down.Round(time.Millisecond), took.Round(time.Millisecond))
		if took > recoverBack {
			t.Errorf("the state came back %v after queryd listened again, want within %v", took.Round(time.Millisecond), recoverBack)
		}
		if n := c.rejections(); n != 1 {
			t.Errorf("%d rejections reported, want one (the bad patch); the client printed:\n%s", n, c.out)
		}
	})
	t.Run("bad-patch-before-connect", func(t *testing.T) {
		t.Parallel()
		d := newDaemon(t)
		c := start(t, d.env())
		c.waitOutput(t, "later", 60*time.Second)
		time.Sleep(300 * time.Millisecond)
		d.Start(t)
		took := d.waitRecovered(t, c, "a rejected patch before queryd ran", 30*time.Second)
		c.waitRejected(t, 10*time.Second)
		if n := c.rejections(); n != 1 {
			t.Errorf("%d rejections reported, want one (the bad patch); the client printed:\n%s", n, c.out)
		}
		t.Logf("the good state answered %v after queryd listened", took.Round(time.Millisecond))
	})
}
