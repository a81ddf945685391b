package sqp

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/state"
)

// fastKey is a fast reply's slot: its query and index.
type fastKey struct {
	q module.FastQuery
	i int
}

// fastReplies collects h's fast-path replies by slot.
func fastReplies(h *Handler) map[fastKey]module.FastReply {
	got := map[fastKey]module.FastReply{}
	h.FastReplies(time.Now(), func(r module.FastReply) { got[fastKey{r.Query, r.Index}] = r })
	return got
}

// TestFastReplies: with the bytes the fast path fills in per request (the
// challenge's token, the query's token in every reply header), each fast
// reply is what Answer sends: the challenge, and every chunk combination's
// reply that is one datagram; a reply of several datagrams is left out.
func TestFastReplies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		snap   *state.Snapshot
		listed int // one-datagram replies: every combination, or those without PlayerInfo
	}{
		{"rich", richSnapshot(), FastChunks},
		{"1000 players", manyPlayers(1000, 0), FastChunks / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := newTestHandler(t, upstreamConfig, tc.snap)
			fast := fastReplies(h)
			ch, ok := fast[fastKey{FastChallenge, 0}]
			if !ok || ch.Open || !bytes.Equal(ch.Reply, make([]byte, ChallengeLen)) {
				t.Fatalf("challenge: %+v, want 5 zero bytes, not open", ch)
			}
			tok := h.issuer.Token(clientA.Addr())
			out, oc := serve(h, ChallengeRequest[:], clientA)
			want := append([]byte{}, ch.Reply...)
			binary.BigEndian.PutUint32(want[1:], tok)
			if oc != dgram.Challenged || len(out) != 1 || !bytes.Equal(out[0], want) {
				t.Fatalf("challenge: Answer sent %v % x; the fast reply with the token is % x", oc, out, want)
			}
			n := 0
			for c := 0; c < FastChunks; c++ {
				out, oc := serve(h, AppendQuery(nil, tok, byte(c)), clientA)
				if oc != dgram.Answered {
					t.Fatalf("chunks %#02x: %v", c, oc)
				}
				r, ok := fast[fastKey{FastQuery, c}]
				if len(out) > 1 {
					if ok {
						t.Fatalf("chunks %#02x: a fast reply for %d datagrams", c, len(out))
					}
					continue
				}
				if !ok {
					t.Fatalf("chunks %#02x: no fast reply for one datagram", c)
				}
				if !bytes.Equal(r.Reply[1:5], []byte{0, 0, 0, 0}) || r.Open {
					t.Fatalf("chunks %#02x: token bytes % x (want zero), open %v", c, r.Reply[1:5], r.Open)
				}
				want := append([]byte{}, r.Reply...)
				copy(want[1:5], AppendQuery(nil, tok, 0)[1:5])
				if !bytes.Equal(out[0], want) {
					t.Fatalf("chunks %#02x: Answer sent % x\nthe fast reply with the token is % x", c, out[0], want)
				}
				n++
			}
			if n != tc.listed || len(fast) != n+1 {
				t.Fatalf("%d one-datagram replies, %d fast replies; want %d and one more (the challenge)", n, len(fast), tc.listed)
			}
		})
	}
}

// TestFastRepliesBeforeUpdate: nothing before the first snapshot (the fast
// path then passes every SQP datagram to the socket path, which ignores it).
func TestFastRepliesBeforeUpdate(t *testing.T) {
	h, _ := newTestHandler(t, upstreamConfig, nil)
	if got := fastReplies(h); len(got) != 0 {
		t.Fatalf("%d fast replies before the first snapshot", len(got))
	}
}
