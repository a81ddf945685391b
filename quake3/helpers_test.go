package quake3

import (
	"encoding/json"
	"net/netip"
	"testing"
	"time"

	"github.com/queryd/queryd/state"
)

var testSrc = netip.MustParseAddrPort("127.0.0.1:50000")

// snapOf makes a snapshot from a JSON state document.
func snapOf(t testing.TB, doc string) *state.Snapshot {
	t.Helper()
	m, err := state.DecodeJSON([]byte(doc))
	if err != nil {
		t.Fatalf("decode %s: %v", doc, err)
	}
	st, err := state.NewStore(m, func() time.Time { return time.Unix(1700000000, 0) })
	if err != nil {
		t.Fatalf("store: %v", err)
	}
	return st.Snapshot()
}

// handlerFor makes a handler updated with the snapshot of doc.
func handlerFor(t testing.TB, cfg Config, doc string) *Handler {
	t.Helper()
	h := NewHandler(cfg, DefaultPacketRate, 0)
	h.Update(snapOf(t, doc))
	return h
}

// serve runs one request through h with a MaxReply scratch and returns the
// single reply datagram (nil when none).
func serve(t testing.TB, h *Handler, req string) ([]byte, string) {
	t.Helper()
	out, outcome := h.Answer([]byte(req), testSrc, make([]byte, MaxReply), nil)
	if len(out) > 1 {
		t.Fatalf("%q: %d datagrams, want at most 1", req, len(out))
	}
	if len(out) == 0 {
		return nil, outcome.String()
	}
	return out[0], outcome.String()
}

// playersJSON makes a "players" object of n players named p0…p(n-1).
func playersJSON(n int, name func(i int) string) string {
	m := map[string]any{}
	for i := 0; i < n; i++ {
		m[itoa(i)] = map[string]any{"name": name(i), "score": i*3 - 5, "ping": 20 + i}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
