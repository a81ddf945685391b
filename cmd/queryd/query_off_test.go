package main

import (
	"strings"
	"testing"
)

// TestQueryTableOff: against a daemon with its default protocols (SQP and
// Bedrock off) and GameSpy4 turned off, `queryd query -table` prints one
// short line for each protocol that sent nothing back while others
// answered, saying it is probably off (before: a 300-character "no answer:
// nothing came back (wrong host or port, a firewall, …)" each).
func TestQueryTableOff(t *testing.T) {
	d := startTestDaemon(t, writeConfig(t, testDir(t), "[gamespy4]\nenabled = false\n"))
	code, out, errOut := run(t, "", "query", "-table", "-timeout", "1s", d.UDP().String())
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"\ngamespy4: no answer (off there?)\n",
		"\nbedrock: no answer (off by default? [bedrock] enabled = true turns it on)\n",
		"\nsqp: no answer (off by default? [sqp] enabled = true turns it on)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("-table does not print %q:\n%s", strings.TrimSpace(want), out)
		}
	}
	if !strings.Contains(out, "\na2s ") {
		t.Errorf("-table has no a2s row:\n%s", out)
	}
}

// TestQueryTableOffNotAlone: when no protocol answers, nothing says "off":
// the server itself is not there, and the long reasons stay.
func TestQueryTableOffNotAlone(t *testing.T) {
	t.Parallel() // waits on timeouts and processes, not on the CPU
	addr := fakeUDP(t, func([]byte) [][]byte { return nil })
	code, out, _ := run(t, "", "query", "-table", "-proto", "sqp", "-timeout", "600ms", addr)
	if code != 1 || strings.Contains(out, "off by default") || !strings.Contains(out, "sqp: no answer: nothing came back") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// TestQueryQuake3Rate: a script polling Quake 3 faster than its per-source
// packet rate (here a burst of 2, so the second query meets it) is told
// about that rate, with the numbers ioquake3 and queryd use, instead of
// the list of every other reason a server may not answer.
func TestQueryQuake3Rate(t *testing.T) {
	d := startTestDaemon(t, writeConfig(t, testDir(t), "[quake3]\npacket_burst = 2\n"))
	addr := d.UDP().String()
	if code, _, errOut := run(t, "", "query", "-proto", "quake3", "-timeout", "1s", addr); code != 0 {
		t.Fatalf("the first query: exit %d: %s", code, errOut)
	}
	code, _, errOut := run(t, "", "query", "-proto", "quake3", "-timeout", "600ms", addr)
	if code != 1 || !strings.Contains(errOut, "10 requests at once, then 1 a second") || !strings.Contains(errOut, "[quake3] packet_rate") {
		t.Fatalf("the second query at once: exit %d, stderr %q; want the Quake 3 packet rate explained", code, errOut)
	}
}
