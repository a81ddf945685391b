//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"testing"
	"time"
)

// TestDivertQuake3Spellings (issue 39 item 6): in front of a stock Quake 3
// server divert takes every spelling ioquake3 reads as getinfo or
// getstatus, not only the command first: one that starts with whitespace,
// a quote or a comment is handed to queryd's socket (the program answers
// only the plain spelling), never to the game server, whose global query
// limit it would draw on; "getinfoX" passes to the game server.
func TestDivertQuake3Spellings(t *testing.T) {
	t.Parallel() // namespaces of its own; it mostly waits for replies
	fx, game, w, srvMAC, cliMAC := newDivertWire(t)
	dv, err := fx.divert(testServer, []DivertAddr{{Game: game, Hidden: testPort}}, []string{"quake3"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dv.Close() })
	for _, c := range []struct {
		p    string
		want string // "socket" or "passed"
	}{
		{"\xFF\xFF\xFF\xFF getstatus", "socket"},
		{"\xFF\xFF\xFF\xFF\tgetinfo", "socket"},
		{"\xFF\xFF\xFF\xFF\"getstatus\"", "socket"},
		{"\xFF\xFF\xFF\xFF/**/GETINFO x", "socket"},
		{"\xFF\xFF\xFF\xFFgetinfoX", "passed"},
		{"\xFF\xFF\xFF\xFF \"getinfoX\"", "passed"},
		{"\xFF\xFF\xFF\xFF// getinfo", "passed"},
	} {
		before := mustCounts(t, dv)
		w.replies(t, frame{dstMAC: srvMAC, srcMAC: cliMAC, src: cliAddr4, dst: srvAddr4, payload: []byte(c.p)}.bytes(), 200*time.Millisecond)
		got := mustCounts(t, dv)
		socket, passed := got.Socket-before.Socket, got.Passed-before.Passed
		if (c.want == "socket") != (socket == 1 && passed == 0) || (c.want == "passed") != (passed == 1 && socket == 0) {
			t.Errorf("%q: diverted %+v → %+v, want one more %s", c.p, before, got, c.want)
		}
	}
}
