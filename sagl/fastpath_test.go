package sagl

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/module"
)

// TestFastReplies: the fast path's challenge, with the source's token
// written into bytes 8–11 as the fast path does, is what Answer sends to a
// request without a valid token (12 bytes); the info reply is there when
// the JSON is one part and equals Answer's; a JSON of several parts is left
// to the socket path.
func TestFastReplies(t *testing.T) {
	collect := func(h *Handler) map[module.FastQuery]module.FastReply {
		got := map[module.FastQuery]module.FastReply{}
		h.FastReplies(time.Now(), func(r module.FastReply) { got[r.Query] = r })
		return got
	}
	if got := collect(NewHandler(Config{}, testIssuer())); len(got) != 0 {
		t.Fatalf("%d fast replies before the first snapshot", len(got))
	}
	h := newHandler(t, exampleDoc, nil)
	fast := collect(h)
	ch, ok := fast[FastChallenge]
	if !ok || len(ch.Reply) != ChallengeSize || ch.Open || !bytes.Equal(ch.Reply[8:], make([]byte, 4)) {
		t.Fatalf("challenge %+v: want 12 bytes with a zero token, not open", ch)
	}
	tok := testIssuer().Token(testSrc.Addr())
	want := append([]byte{}, ch.Reply...)
	binary.LittleEndian.PutUint32(want[8:], tok)
	if out, o := serve(h, req(KindInfo, 0, 0), testSrc); o != dgram.Challenged || len(out) != 1 || !bytes.Equal(out[0], want) {
		t.Fatalf("challenge: Answer sent %v % x; the fast reply with the token is % x", o, out, want)
	}
	info, ok := fast[FastInfo]
	out, o := serve(h, req(KindInfo, tok, 0), testSrc)
	if !ok || info.Open || o != dgram.Answered || len(out) != 1 || !bytes.Equal(out[0], info.Reply) {
		t.Fatalf("info: fast %v % x; Answer %v %d datagrams", ok, info.Reply, o, len(out))
	}
	if got := collect(newHandler(t, manyPlayers(100), nil)); len(got) != 1 {
		t.Fatalf("a JSON of several parts: %d fast replies, want only the challenge", len(got))
	}
}
