package bedrock

import (
	"bytes"
	"testing"
	"time"

	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/module"
)

// TestFastReplies: the fast path's pong, with the ping's time copied into
// bytes 1–8 as the fast path does, is what Answer sends; it is open (the
// fast path applies the packet rate and the unproven budget), and absent
// before the first snapshot.
func TestFastReplies(t *testing.T) {
	var got []module.FastReply
	put := func(r module.FastReply) { got = append(got, r) }
	newTestHandler(t, vanillaConfig, nil).FastReplies(time.Now(), put)
	if len(got) != 0 {
		t.Fatalf("%d fast replies before the first snapshot", len(got))
	}
	h := newTestHandler(t, vanillaConfig, vanillaSnapshot())
	h.FastReplies(time.Now(), put)
	if len(got) != 1 || got[0].Query != FastPong || !got[0].Open {
		t.Fatalf("fast replies %+v, want one open bedrock_pong", got)
	}
	fast := got[0].Reply
	if !bytes.Equal(fast[pongTime:pongTime+8], make([]byte, 8)) {
		t.Fatalf("time bytes % x, want zero", fast[pongTime:pongTime+8])
	}
	for _, ping := range []string{mcsuPing, gamedigPing, "02" + mcsuPing[2:]} {
		req := unhex(t, ping)
		out, oc := h.Answer(req, clientA, make([]byte, MaxPong), nil)
		want := append([]byte{}, fast...)
		copy(want[pongTime:pongTime+8], req[pingTime:pingTime+8])
		if oc != dgram.AnsweredOpen || len(out) != 1 || !bytes.Equal(out[0], want) {
			t.Fatalf("%s: Answer sent %v % x\nthe fast reply with the time is % x", ping, oc, out, want)
		}
	}
	if r, b := h.PacketLimit(); r != DefaultPacketRate || b != DefaultPacketBurst {
		t.Fatalf("PacketLimit %v, %d: the fast path applies it, want the defaults", r, b)
	}
}
