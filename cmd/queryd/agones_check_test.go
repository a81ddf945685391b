package main

import (
	"strings"
	"testing"
)

// TestCheckAgones: [agones] is a table `queryd check` (and so the daemon)
// knows, checked with its keys; with [upstream] on too it is refused under
// its key, saying why (both would make the state's upstream layer);
// enabled = false beside [upstream] is fine. Before the wiring, [agones]
// was an unknown table.
func TestCheckAgones(t *testing.T) {
	dir := testDir(t)
	base := loopbackConfig(dir, "127.0.0.1:0", "127.0.0.1:0")
	if code, errOut := checkConfig(t, dir, base+"[agones]\nsdk = \"localhost:19358\"\n", "-local=false"); code != 0 {
		t.Errorf("[agones]: exit %d: %s", code, errOut)
	}
	code, errOut := checkConfig(t, dir, base+"[agones]\ninterval = \"1h\"\nplayers_list = 5\n", "-local=false")
	if code != 1 || !strings.Contains(errOut, "agones.interval: ") || !strings.Contains(errOut, "agones.players_list: ") {
		t.Errorf("bad [agones] keys: exit %d: %s", code, errOut)
	}
	up := "[upstream]\nprotocol = \"a2s\"\naddress = \"127.0.0.1:27016\"\n"
	code, errOut = checkConfig(t, dir, base+up+"[agones]\n", "-local=false")
	if code != 1 || !strings.Contains(errOut, "  agones: ") || !strings.Contains(errOut, "[upstream]") || !strings.Contains(errOut, "not both") {
		t.Errorf("[agones] with [upstream]: exit %d: %s", code, errOut)
	}
	if code, errOut := checkConfig(t, dir, base+up+"[agones]\nenabled = false\n", "-local=false"); code != 0 {
		t.Errorf("[agones] off with [upstream]: exit %d: %s", code, errOut)
	}
}
