package a2s

import (
	"github.com/queryd/queryd/internal/udptest"

	"encoding/binary"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Malicious or confused A2S servers on loopback: every call ends by its
// timeout with the error that names what the server did.

func hostileClient(t *testing.T, addr string) *Client {
	t.Helper()
	c := udptest.Dial(t, Dial, addr)
	c.Timeout = udptest.HostileTimeout
	return c
}

// bigInfo is an A2S_INFO reply too long for one packet (a 1,500-byte name).
func bigInfo() []byte {
	b := []byte{0xFF, 0xFF, 0xFF, 0xFF, ReplyInfo, 17}
	for _, s := range []string{strings.Repeat("n", 1500), "map", "folder", "game"} {
		b = append(append(b, s...), 0)
	}
	b = binary.LittleEndian.AppendUint16(b, 480)
	b = append(b, 1, 8, 0, 'd', 'l', 0, 0)
	return append(b, "1.0\x00"...)
}

// bigPlayers is an A2S_PLAYER reply of 60 players, too long for one packet.
func bigPlayers() []byte {
	b := []byte{0xFF, 0xFF, 0xFF, 0xFF, ReplyPlayer, 60}
	for i := range 60 {
		b = append(b, byte(i))
		b = append(append(b, strings.Repeat("p", 30)...), 0)
		b = binary.LittleEndian.AppendUint32(b, uint32(i))
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(1))
	}
	return b
}

// Issue item 5: a duplicated split INFO reply was reassembled as the
// PLAYER answer ("want a 'D' reply"). Replies of the wrong type or another
// split id are dropped and the client keeps reading.
func TestClientStaleSplitReply(t *testing.T) {
	info, players := Split(bigInfo(), 1), Split(bigPlayers(), 2)
	if len(info) < 2 || len(players) < 2 {
		t.Fatalf("not split: %d and %d fragments", len(info), len(players))
	}
	addr := udptest.Answer(t, func(req []byte) [][]byte {
		switch req[4] {
		case TypeInfo: // the INFO reply twice, as a network may duplicate it
			return append(append([][]byte{}, info...), info...)
		case TypePlayer: // a stale unsplit INFO first, then the answer
			return append([][]byte{bigInfo()[:40]}, players...)
		}
		return nil
	})
	c := hostileClient(t, addr)
	in, err := c.Info()
	if err != nil || len(in.Name) != 1500 {
		t.Fatalf("info: %v", err)
	}
	ps, err := c.Players()
	if err != nil || len(ps) != 60 || ps[59].Score != 59 {
		t.Fatalf("players: %d, %v", len(ps), err)
	}
}

// Issue item 6: a flood of split fragments that never completes a reply was
// "nothing came back". It is a bad answer, and what the client keeps is
// bounded (maxSplits replies, maxSplitBytes bytes).
func TestClientFragmentFlood(t *testing.T) {
	var sent atomic.Int32
	frag := make([]byte, 1400)
	copy(frag, []byte{0xFE, 0xFF, 0xFF, 0xFF})
	addr := udptest.Answer(t, func([]byte) [][]byte {
		var out [][]byte
		for i := 0; i < 500 && sent.Add(1) <= 5000; i++ {
			d := append([]byte{}, frag...)
			binary.LittleEndian.PutUint32(d[4:], uint32(i)) // a new id each time
			d[8], d[9] = 255, byte(i%254)                   // 255 fragments, never all
			out = append(out, d)
		}
		return out
	})
	start := time.Now()
	_, err := hostileClient(t, addr).Info()
	udptest.InTime(t, start)
	udptest.WantBadAnswer(t, err, "incomplete split reply")
}

// The bounds hold whatever the fragments: ids, counts and sizes.
func TestSplitsBounded(t *testing.T) {
	var s splits
	d := make([]byte, 12+4000)
	copy(d, []byte{0xFE, 0xFF, 0xFF, 0xFF})
	for i := range 20000 {
		binary.LittleEndian.PutUint32(d[4:], uint32(i%7)<<8)
		d[8], d[9] = 255, byte(i%255)
		if p, err := s.add(d[:12+i%4000]); p != nil || err != nil {
			t.Fatalf("fragment %d: %d bytes, %v", i, len(p), err)
		}
		if len(s.pending) > maxSplits || s.bytes > maxSplitBytes {
			t.Fatalf("after %d fragments: %d replies, %d bytes kept", i, len(s.pending), s.bytes)
		}
	}
	if s.failure() == nil || s.evicted == 0 {
		t.Fatalf("failure %v, %d evicted", s.failure(), s.evicted)
	}
}

// A server that always answers with a new challenge gets maxChallenges
// requests, then ErrOnlyChallenges.
func TestClientEndlessChallenges(t *testing.T) {
	var n atomic.Int32
	addr := udptest.Answer(t, func([]byte) [][]byte {
		return [][]byte{binary.LittleEndian.AppendUint32([]byte{0xFF, 0xFF, 0xFF, 0xFF, TypeChallenge}, uint32(n.Add(1)))}
	})
	_, err := hostileClient(t, addr).Players()
	if !errors.Is(err, ErrOnlyChallenges) || !strings.Contains(err.Error(), "answers only with challenges") || n.Load() != maxChallenges {
		t.Fatalf("%d requests, err %v; want %d and ErrOnlyChallenges", n.Load(), err, maxChallenges)
	}
}

// Replies of the wrong type only, or cut short, are bad answers.
func TestClientBadReplies(t *testing.T) {
	for name, c := range map[string]struct {
		reply []byte
		want  string
	}{
		"wrong type":     {[]byte("\xFF\xFF\xFF\xFFI\x11name"), "want a 'D' reply, got 'I'"},
		"no header":      {[]byte("\x01\x02\x03\x04D\x00"), "without the FF FF FF FF header"},
		"cut short":      {[]byte("\xFF\xFF\xFF\xFFD\x02\x00ab"), "string without its NUL"},
		"compressed":     {[]byte("\xFE\xFF\xFF\xFF\x01\x00\x00\x80\x01\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00BZhxx"), "compressed split reply: bzip2"},
		"fragment short": {[]byte("\xFE\xFF\xFF\xFF\x01\x00"), "split fragment too short"},
	} {
		t.Run(name, func(t *testing.T) {
			addr := udptest.Answer(t, func([]byte) [][]byte { return [][]byte{c.reply} })
			start := time.Now()
			_, err := hostileClient(t, addr).Players()
			udptest.InTime(t, start)
			udptest.WantBadAnswer(t, err, c.want)
		})
	}
}
