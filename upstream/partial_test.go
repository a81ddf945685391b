package upstream

import (
	"encoding/binary"
	"io"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/udptest"
)

// fakeA2S answers A2S_INFO and A2S_PLAYER without a challenge, and
// A2S_RULES only while rules is true (many servers turn RULES off).
func fakeA2S(t *testing.T, rules *atomic.Bool) string {
	info := []byte("\xFF\xFF\xFF\xFFI\x11Partial\x00cp_badlands\x00tf\x00Team Fortress\x00\xb8\x01\x01\x18\x00dl\x00\x01v1\x00")
	players := []byte("\xFF\xFF\xFF\xFFD\x01\x00Ann\x00\x07\x00\x00\x00")
	players = binary.LittleEndian.AppendUint32(players, math.Float32bits(42))
	ruleReply := []byte("\xFF\xFF\xFF\xFFE\x01\x00mp_timelimit\x0030\x00")
	return udptest.Answer(t, func(req []byte) [][]byte {
		switch {
		case len(req) < 5:
		case req[4] == 'T':
			return [][]byte{info}
		case req[4] == 'U':
			return [][]byte{players}
		case req[4] == 'V' && rules.Load():
			return [][]byte{ruleReply}
		}
		return nil
	})
}

// A server that answers A2S_INFO and A2S_PLAYER but not A2S_RULES is
// served (the poll is partial); the rules of an earlier answer stand in.
func TestPollerA2SPartial(t *testing.T) {
	var rules atomic.Bool
	rules.Store(true)
	addr := fakeA2S(t, &rules)
	p, store, reg := startPoller(t, A2S, addr, time.Minute, io.Discard)
	waitFor(t, "a whole answer", func() bool { return counter(t, reg, "queryd_upstream_polls_total", OutcomeAnswered) >= 1 })
	snap := store.Snapshot()
	if snap.Name != "Partial" || len(snap.Players) != 1 || len(snap.Rules) != 3 {
		t.Fatalf("%+v", snap)
	}
	rules.Store(false)
	waitFor(t, "a partial answer", func() bool { return counter(t, reg, "queryd_upstream_polls_total", OutcomePartial) >= 1 })
	snap = store.Snapshot()
	if len(snap.Rules) != 3 || snap.Rules[2].Key != "mp_timelimit" || snap.Rules[2].Value != "30" {
		t.Fatalf("rules after a partial answer: %+v", snap.Rules)
	}
	if st := p.Status(); !strings.Contains(st.Partial, "A2S_RULES") || st.LastError != "" || st.LastAnswer.IsZero() {
		t.Errorf("Status of a partial answer: %+v", st)
	}
}
