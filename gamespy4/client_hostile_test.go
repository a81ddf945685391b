package gamespy4

import (
	"github.com/queryd/queryd/internal/udptest"

	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Malicious or confused GameSpy4 servers on loopback: every call ends by
// its timeout with the error that names what the server did.

func hostileClient(t *testing.T, addr string) *Client {
	t.Helper()
	c := udptest.Dial(t, Dial, addr)
	c.Timeout = udptest.HostileTimeout
	return c
}

// handshakeReply answers req (which carries the session) with token text.
func handshakeReply(req []byte, token string) []byte {
	return append(append([]byte{TypeHandshake}, req[3:7]...), token...)
}

// Issue item 6: a token that is not a number, or without its NUL, was
// reported as "answered only with challenges". It is a bad answer.
func TestClientBadToken(t *testing.T) {
	for token, want := range map[string]string{
		"abc\x00":         `token "abc" is not a decimal int32`,
		"12345":           "string without its NUL",
		"2147483648\x00":  `token "2147483648" is not a decimal int32`,
		"12345\x00extra":  "5 bytes after the reply",
		"\x00":            `token "" is not a decimal int32`,
		"123\x00\x00\x00": "2 bytes after the reply",
	} {
		addr := udptest.Answer(t, func(req []byte) [][]byte { return [][]byte{handshakeReply(req, token)} })
		_, err := hostileClient(t, addr).Basic()
		var bad *BadAnswerError
		if !errors.As(err, &bad) || !strings.Contains(bad.What, want) {
			t.Errorf("token %q: err %v; want a BadAnswerError saying %q", token, err, want)
		}
	}
}

// A stat request answered with a new token each time gets maxChallenges
// requests in all (the handshake's included), then ErrOnlyChallenges.
func TestClientEndlessChallenges(t *testing.T) {
	var n atomic.Int32
	addr := udptest.Answer(t, func(req []byte) [][]byte {
		return [][]byte{handshakeReply(req, strconv.Itoa(100000+int(n.Add(1)))+"\x00")}
	})
	_, err := hostileClient(t, addr).Full()
	if !errors.Is(err, ErrOnlyChallenges) || !strings.Contains(err.Error(), "answers only with challenges") || n.Load() != maxChallenges {
		t.Fatalf("%d requests, err %v; want %d and ErrOnlyChallenges", n.Load(), err, maxChallenges)
	}
}

// Replies of another session or type are dropped and the client keeps
// reading: the right reply after them is taken.
func TestClientDropsStaleReplies(t *testing.T) {
	s := [4]byte{0, 0, 0, 1}
	basic := append(unhex(t, "00 00 00 00 01"), unhex(t, wikiBasic)...)
	addr := udptest.Answer(t, func(req []byte) [][]byte {
		other := append([]byte{req[2], 9, 9, 9, 9}, "1\x00"...)
		switch req[2] {
		case TypeHandshake:
			return [][]byte{other, {TypeStat}, handshakeReply(req, "123456\x00")}
		case TypeStat:
			return [][]byte{other, handshakeReply(req, "123456\x00")[:3], append([]byte{TypeStat}, append(req[3:7:7], basic[5:]...)...)}
		}
		return nil
	})
	c := hostileClient(t, addr)
	c.Session = s
	b, err := c.Basic()
	if err != nil || b.MOTD != "A Minecraft Server" {
		t.Fatalf("basic %+v, %v", b, err)
	}
}

// Only replies the client cannot use: a bad answer at the deadline, not a
// timeout.
func TestClientOnlyStaleReplies(t *testing.T) {
	addr := udptest.Answer(t, func(req []byte) [][]byte {
		return [][]byte{append([]byte{TypeHandshake, 9, 9, 9, 9}, "1\x00"...)}
	})
	start := time.Now()
	_, err := hostileClient(t, addr).Basic()
	udptest.InTime(t, start)
	udptest.WantBadAnswer(t, err, "session id 09 09 09 09")
}
