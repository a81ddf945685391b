package main

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/quake3"
)

// q3InfoOnly are ioquake3's infoResponse keys that its statusResponse does
// not carry: a poll (getstatus) never sees them, so a front cannot say
// them (quake3/doc.go).
var q3InfoOnly = []string{"voip", "pure"}

// TestFaithfulQuake3 is the Quake 3 row of the fronting table: a front of
// a real ioquake3 server (Debian's openarena-server, 2 bots), with
// [quake3] at its defaults (protocol 68, no gamename), answers getstatus
// as the server does: every cvar and value (com_protocol 71 and no
// protocol key, gamename baseoa, com_gamename Quake3Arena, every g_ and
// sv_ cvar) and every player line; and getinfo with the server's keys and
// values (protocol 71, gamename Quake3Arena) but the info-only ones.
// Before the fix the front's statusResponse had protocol\68 besides, and
// its getinfo said protocol 68 and gamename baseoa.
//
// Exceptions: the challenge (each request's own: both echo the one they
// were sent; the client checks it); voip and pure in getinfo (above). The
// bots frag, so the two answers are compared until they agree: ioquake3
// answers one query a second per source address after a burst of 10, and
// the front's polls and the test's queries all come from 127.0.0.1, so the
// front polls every 3 s and the test asks getstatus every 2.5 s, getinfo
// only once the statuses agree.
func TestFaithfulQuake3(t *testing.T) {
	addr, out := startIoquake3(t)
	waitStatus(t, addr, 60*time.Second, func(st *quake3.Status) bool { return len(st.Players) == 2 }, out)
	front := daemontest.Start(t, mods, fmt.Sprintf(`[upstream]
protocol = "quake3"
address = %q
interval = "3s"
timeout = "1s"
[quake3]
packet_rate = 0.0
`, addr))

	dial := func(addr string) *quake3.Client {
		c, err := quake3.Dial(addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.Timeout = 2 * time.Second
		return c
	}
	stock, fr := dial(addr), dial(front.UDP().String())
	status := func(c *quake3.Client) (*quake3.Status, error) {
		st, err := c.Status()
		if err == nil {
			delete(st.Info.Values, "challenge") // each request's own
		}
		return st, err
	}
	info := func(c *quake3.Client) (map[string]string, error) {
		i, err := c.Info()
		if err != nil {
			return nil, err
		}
		delete(i.Values, "challenge")
		return i.Values, nil
	}
	var diffs []string
	deadline := time.Now().Add(90 * time.Second)
	for attempt := 1; ; attempt++ {
		time.Sleep(2500 * time.Millisecond)
		sStatus, err := status(stock)
		if err != nil {
			diffs = []string{"the stock server's getstatus: " + err.Error()}
		} else if fStatus, err := status(fr); err != nil {
			diffs = []string{"the front's getstatus: " + err.Error()}
		} else if diffs = q3Diff(fStatus, sStatus, nil, nil); len(diffs) > 0 {
			t.Logf("attempt %d: %q", attempt, diffs)
		} else if sInfo, err := info(stock); err != nil {
			diffs = []string{"the stock server's getinfo: " + err.Error()}
		} else if fInfo, err := info(fr); err != nil {
			diffs = []string{"the front's getinfo: " + err.Error()}
		} else {
			want := maps.Clone(sInfo)
			for _, k := range q3InfoOnly {
				delete(want, k)
			}
			diffs = q3Diff(fStatus, sStatus, fInfo, want)
			if len(diffs) == 0 {
				if sStatus.Info.Get("com_protocol") != "71" || fInfo["protocol"] != "71" || fInfo["gamename"] != "Quake3Arena" ||
					len(fStatus.Players) != 2 || sInfo["voip"] == "" {
					t.Fatalf("the stock server is not the ioquake3 this test expects: status %v, info %v", sStatus.Info.Values, sInfo)
				}
				t.Logf("Quake 3 (attempt %d): statusResponse: %d cvars equal, no others (com_protocol %s, gamename %s, com_gamename %s), %d player lines equal; "+
					"infoResponse: %d keys equal (protocol %s, gamename %s); the server's info-only keys the front lacks: %v",
					attempt, len(fStatus.Info.Values), fStatus.Info.Get("com_protocol"), fStatus.Info.Get("gamename"), fStatus.Info.Get("com_gamename"),
					len(fStatus.Players), len(fInfo), fInfo["protocol"], fInfo["gamename"], q3InfoOnly)
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the front's answers never agreed with the server's within 90 s (%d attempts); the last differences:\n%s\nserver output:\n%s",
				attempt, fmt.Sprint(diffs), out)
		}
	}
}

// q3Diff lists how the front's statusResponse and infoResponse values
// differ from the stock server's.
func q3Diff(front, stock *quake3.Status, frontInfo, stockInfo map[string]string) []string {
	var d []string
	for _, c := range []struct {
		what        string
		front, want map[string]string
	}{{"statusResponse", front.Info.Values, stock.Info.Values}, {"infoResponse", frontInfo, stockInfo}} {
		for _, k := range slices.Sorted(maps.Keys(c.want)) {
			if v, ok := c.front[k]; !ok || v != c.want[k] {
				d = append(d, fmt.Sprintf("%s %s: the front %q (present %v), the server %q", c.what, k, v, ok, c.want[k]))
			}
		}
		for _, k := range slices.Sorted(maps.Keys(c.front)) {
			if _, ok := c.want[k]; !ok {
				d = append(d, fmt.Sprintf("%s %s: the front adds it (%q)", c.what, k, c.front[k]))
			}
		}
	}
	if !slices.Equal(front.Players, stock.Players) {
		d = append(d, fmt.Sprintf("players: the front %v, the server %v", front.Players, stock.Players))
	}
	return d
}
