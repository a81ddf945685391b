package main

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/daemon"
)

// TestFrontPeerLookupChangesNothing: a relay + [upstream] server nothing
// feeds takes its state from the game server, so only the game server can
// silence it. A relay plugin's peer lookups (docs/relay.md has plugins ban
// by the address peer returns), a rejected one among them, a get and a
// rejected state are not feed activity: past stale_after the front still
// answers (before, one peer armed the feed's stale timer and the front
// fell silent with reason feed while the game server answered every poll).
func TestFrontPeerLookupChangesNothing(t *testing.T) {
	t.Parallel() // waits on timeouts and processes, not on the CPU
	up := newFakeQ3(t)
	front := startFront(t, "1s", fmt.Sprintf("[relay]\nupstream = %q\n[upstream]\nprotocol = \"quake3\"\ninterval = \"100ms\"\ntimeout = \"200ms\"\n", up.addr))
	askUntil(t, front.UDP())
	c, err := net.Dial("unix", front.FeedPath())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	for _, line := range []string{`{"op":"peer","port":1}`, `{"op":"peer","port":65535}`, `{"op":"get"}`, `{"op":"patch","state":{"max_players":-1}}`} {
		fmt.Fprintln(c, line)
		reply, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, "patch") && !strings.Contains(reply, `"ok":false`) {
			t.Fatalf("a bad patch was accepted: %s", reply)
		}
	}
	time.Sleep(1500 * time.Millisecond)
	if s := front.Silence(); s.State != daemon.StateAnswering || s.Causes.Has(daemon.ReasonFeed) {
		t.Fatalf("after peer, get and a rejected patch, past stale_after: %+v", s)
	}
	if st := askUntil(t, front.UDP()); st.Info.Get("mapname") != "q3dm17" {
		t.Fatalf("the front: %v", st.Info.Values)
	}
}
