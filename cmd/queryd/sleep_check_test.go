package main

import (
	"strings"
	"testing"
)

// TestCheckSleep: `queryd check` knows [sleep] and says, each under its
// key and in one run, that a command is not there or not executable, a
// bound is out of range, and that queryd cannot see a join (no relay,
// divert or [feed] table) or know the game server is up; a relay server
// polling its game server with commands on PATH passes.
func TestCheckSleep(t *testing.T) {
	dir := testDir(t)
	base := loopbackConfig(dir, "127.0.0.1:0", "127.0.0.1:0")
	relay := "[relay]\nupstream = \"127.0.0.1:27961\"\n[upstream]\nprotocol = \"quake3\"\n"
	ok := "[sleep]\nafter = \"15m\"\nstart = [\"true\"]\nstop = [\"/bin/true\"]\n"
	if code, errOut := checkConfig(t, dir, base+relay+ok, "-local=false"); code != 0 {
		t.Errorf("a good [sleep]: exit %d: %s", code, errOut)
	}
	bad := "[sleep]\nafter = \"15m\"\nstart = [\"no-such-command-x\", \"start\"]\nstop = [\"" + dir + "\"]\nwakes_per_hour = 0\nhold_bytes = \"1KiB\"\n"
	code, errOut := checkConfig(t, dir, base+relay+bad, "-local=false")
	for _, want := range []string{"sleep.start: \"no-such-command-x\": not found on PATH", "sleep.stop: " + dir + ": not a regular file",
		"sleep.wakes_per_hour: want 1 to 3600", "sleep.hold_bytes: want 2048 to"} {
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("bad [sleep]: exit %d, want %q in:\n%s", code, want, errOut)
		}
	}
	noFeed := "[listen]\nudp = [\"127.0.0.1:0\"]\n[admin]\nlisten = \"127.0.0.1:0\"\n" // no [feed] table
	code, errOut = checkConfig(t, dir, noFeed+ok, "-local=false")
	if code != 1 || !strings.Contains(errOut, "  sleep: queryd cannot see a player arrive") || !strings.Contains(errOut, "cannot know when the game server it started is up") {
		t.Errorf("[sleep] with no relay, divert or feed: exit %d:\n%s", code, errOut)
	}
}
