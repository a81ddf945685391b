package bedrock

import (
	"bytes"
	"testing"

	"github.com/queryd/queryd/dgram"
)

// The pong echoes each ping's time byte for byte; the rest is the encoded
// pong.
func TestAnswerEchoesTime(t *testing.T) {
	h := newTestHandler(t, vanillaConfig, vanillaSnapshot())
	scratch := make([]byte, MaxPong)
	for _, hx := range []string{mcsuPing, gamedigPing} {
		ping := unhex(t, hx)
		out, oc := h.Answer(ping, clientA, scratch, nil)
		if oc != dgram.AnsweredOpen || len(out) != 1 {
			t.Fatalf("outcome %v, %d datagrams", oc, len(out))
		}
		want := EncodePong(vanillaConfig, vanillaSnapshot())
		copy(want[1:9], ping[1:9])
		if !bytes.Equal(out[0], want) {
			t.Fatalf("pong\n% x\nwant\n% x", out[0], want)
		}
		p, err := ParsePong(out[0])
		if err != nil || p.ServerGUID != vanillaConfig.GUID || p.Status.MOTD != "Dedicated Server" {
			t.Fatalf("%+v %v", p, err)
		}
	}
	if p := h.Pong(); !bytes.Equal(p[1:9], make([]byte, 8)) {
		t.Fatalf("Answer wrote into the encoded pong: % x", p[:9])
	}
}

func TestAnswerOutcomes(t *testing.T) {
	scratch := make([]byte, MaxPong)
	if out, oc := newTestHandler(t, vanillaConfig, nil).Answer(unhex(t, mcsuPing), clientA, scratch, nil); oc != dgram.Ignored || len(out) != 0 {
		t.Errorf("before the first snapshot: %v, %d datagrams", oc, len(out))
	}
	h := newTestHandler(t, vanillaConfig, vanillaSnapshot())
	bad := unhex(t, mcsuPing)
	bad[0] = 0x05
	if out, oc := h.Answer(bad, clientA, scratch, nil); oc != dgram.Malformed || len(out) != 0 {
		t.Errorf("id 05: %v, %d datagrams", oc, len(out))
	}
	if out, oc := h.Answer(unhex(t, mcsuPing), clientA, scratch[:40], nil); oc != dgram.Ignored || len(out) != 0 {
		t.Errorf("scratch too small: %v, %d datagrams", oc, len(out))
	}
	// A new snapshot changes the pong.
	snap := vanillaSnapshot()
	snap.Name = "Renamed"
	h.Update(snap)
	out, _ := h.Answer(unhex(t, mcsuPing), clientA, scratch, nil)
	if p, err := ParsePong(out[0]); err != nil || p.Status.MOTD != "Renamed" {
		t.Errorf("after Update: %+v %v", p, err)
	}
}

func TestPacketLimit(t *testing.T) {
	for _, c := range []struct {
		rate      float64
		burst     int
		wantRate  float64
		wantBurst int
	}{
		{DefaultPacketRate, 0, DefaultPacketRate, DefaultPacketBurst},
		{0.5, 3, 0.5, 3},
		{0, 5, 0, 0}, // packet_rate = 0: off
	} {
		r, b := NewHandler(vanillaConfig, c.rate, c.burst).PacketLimit()
		if r != c.wantRate || b != c.wantBurst {
			t.Errorf("NewHandler(%v, %d): %v, %d; want %v, %d", c.rate, c.burst, r, b, c.wantRate, c.wantBurst)
		}
	}
}

// Serving a ping allocates nothing.
func TestAnswerAllocs(t *testing.T) {
	h := newTestHandler(t, vanillaConfig, vanillaSnapshot())
	scratch := make([]byte, MaxPong)
	out := make([][]byte, 0, 4)
	ping := unhex(t, mcsuPing)
	if n := testing.AllocsPerRun(1000, func() { out, _ = h.Answer(ping, clientA, scratch, out[:0]) }); n != 0 {
		t.Fatalf("%v allocations per ping", n)
	}
}
