package clients_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/internal/testkit"
)

// TestGoRecover: feed.Client (NewClient, over the feed socket) through the
// recover rows (see recoverRows), driven by recoverGo in this process: a
// queryd restart, a rejected patch then a restart, a rejected patch before
// queryd runs.
func TestGoRecover(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("feed.Client through three queryd restarts: -short")
	}
	recoverRows(t, recoverGo)
}

// recoverGo runs the recover timeline (see recoverRows) with feed.Client in
// a goroutine, as a game server written in Go would: the client's output
// is what it prints.
func recoverGo(t *testing.T, env []string) *client {
	t.Helper()
	get := func(name, def string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], name+"="); ok {
				return v
			}
		}
		return def
	}
	c := &client{out: &testkit.Buffer{}, done: make(chan struct{})}
	say := func(format string, args ...any) { fmt.Fprintf(c.out, format+"\n", args...) }
	fc := feed.NewClient(get("QUERYD_FEED_SOCKET", ""))
	fc.OnRejected = func(r *feed.Rejection) { say("rejected %s: %s", r.Op, r.Err.Msg) }
	bad := get("QUERYD_RECOVER_BAD", "1") != "0"
	stop := make(chan struct{})
	// call reports what a call returned: its own rejection, or an error.
	call := func(op string, _ uint64, err error) {
		var re *feed.ReplyError
		switch {
		case err == nil, errors.Is(err, feed.ErrNotSent):
		case errors.As(err, &re):
			say("rejected %s: %s", op, re.Msg)
		default:
			fmt.Fprintf(os.Stderr, "feed error: %v\n", err)
		}
	}
	go func() {
		defer close(c.done)
		defer fc.Close()
		start := time.Now()
		v, err := fc.Replace(map[string]any{"name": recoverName, "map": recoverMap, "max_players": 8,
			"players": map[string]any{"1": map[string]any{"name": "Zoë", "score": 3}}})
		call("replace", v, err)
		say("good")
		step, tick := 1, 0
		frame := time.NewTicker(100 * time.Millisecond)
		defer frame.Stop()
		for {
			select {
			case <-stop:
				return
			case <-frame.C:
			}
			if step == 1 && time.Since(start) >= time.Second {
				if bad {
					v, err := fc.Patch(map[string]any{"players": map[string]any{"1": map[string]any{"score": 1.5}}})
					call("patch", v, err)
					say("bad")
				}
				step = 2
			}
			if step == 2 && time.Since(start) >= 1500*time.Millisecond {
				v, err := fc.Patch(map[string]any{"players": map[string]any{"2": map[string]any{"name": "Later", "score": 2}}})
				call("patch", v, err)
				say("later")
				step = 3
			}
			tick++
			v, err := fc.Patch(map[string]any{"values": map[string]any{"tick": tick}})
			call("patch", v, err)
		}
	}()
	t.Cleanup(func() {
		close(stop)
		<-c.done
	})
	return c
}
