package sqp

import (
	"encoding/binary"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/udptest"
)

// Malicious or confused SQP servers on loopback: every call ends by its
// timeout with the error that names what the server did.

func hostileClient(t *testing.T, addr string) *Client {
	t.Helper()
	c := udptest.Dial(t, Dial, addr)
	c.Timeout = udptest.HostileTimeout
	return c
}

// challengeOf returns a challenge reply with tok.
func challengeOf(tok uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{TypeChallenge}, tok)
}

// packet returns a query reply packet.
func packet(tok uint32, cur, last byte, payload []byte) []byte {
	b := []byte{TypeQuery, 0, 0, 0, 0, 0, Version, cur, last, 0, 0}
	binary.BigEndian.PutUint32(b[1:], tok)
	binary.BigEndian.PutUint16(b[9:], uint16(len(payload)))
	return append(b, payload...)
}

// scripted answers a challenge with token 7 and a query with reply(token).
func scripted(t *testing.T, reply func(tok uint32) [][]byte) string {
	return udptest.Answer(t, func(req []byte) [][]byte {
		if req[0] == TypeChallenge {
			return [][]byte{challengeOf(7)}
		}
		return reply(binary.BigEndian.Uint32(req[1:5]))
	})
}

// infoPayload is a ServerInfo chunk for "x".
var infoPayload = []byte{0, 0, 0, 11, 0, 1, 0, 2, 1, 'x', 0, 0, 0, 0x1F, 0x90}

// go-svrquery's captured challenge reply: token 256.
func TestClientChallenge(t *testing.T) {
	req, resp := vector(t, "challenge_success_request"), vector(t, "challenge_success_response")
	addr := udptest.Answer(t, func(p []byte) [][]byte {
		if string(p) != string(req) {
			return nil
		}
		return [][]byte{resp}
	})
	if tok, err := hostileClient(t, addr).Challenge(); err != nil || tok != 256 {
		t.Fatalf("token %d, %v", tok, err)
	}
}

// Packets in any order, a duplicate, and a stale packet of another token
// before them: the reply is reassembled.
func TestClientReassembles(t *testing.T) {
	addr := scripted(t, func(tok uint32) [][]byte {
		return [][]byte{
			packet(tok+1, 0, 0, infoPayload), // an old reply
			packet(tok, 2, 2, infoPayload[10:]),
			packet(tok, 0, 2, infoPayload[:4]),
			packet(tok, 0, 2, infoPayload[:4]),
			packet(tok, 1, 2, infoPayload[4:10]),
		}
	})
	r, err := hostileClient(t, addr).Query(ChunkServerInfo)
	if err != nil || *r.Info != (ServerInfo{CurrentPlayers: 1, MaxPlayers: 2, ServerName: "x", Port: 8080}) {
		t.Fatalf("%+v, %v", r, err)
	}
}

// Broken replies are bad answers, each saying what was wrong.
func TestClientBadReplies(t *testing.T) {
	for want, reply := range map[string]func(tok uint32) [][]byte{
		"packet 1 says the last is 1, an earlier one 2": func(tok uint32) [][]byte {
			return [][]byte{packet(tok, 0, 2, infoPayload[:4]), packet(tok, 1, 1, infoPayload[4:])}
		},
		"version 2, want 1": func(tok uint32) [][]byte {
			p := packet(tok, 0, 0, infoPayload)
			p[6] = 2
			return [][]byte{p}
		},
		"ServerInfo chunk of 11 bytes, only 10 left": func(tok uint32) [][]byte {
			return [][]byte{packet(tok, 0, 0, infoPayload[:len(infoPayload)-1])}
		},
		"reply cut short": func(tok uint32) [][]byte {
			p := append([]byte{}, infoPayload...)
			p[8] = 200 // a server name longer than the chunk
			return [][]byte{packet(tok, 0, 0, p)}
		},
		"is not UTF-8": func(tok uint32) [][]byte {
			p := append([]byte{}, infoPayload...)
			p[9] = 0xFF
			return [][]byte{packet(tok, 0, 0, p)}
		},
		"token 0x00000008, want 0x00000007 (1 replies dropped)": func(tok uint32) [][]byte {
			return [][]byte{packet(tok+1, 0, 0, infoPayload)}
		},
		"payload length 15, but 14 bytes follow the header": func(tok uint32) [][]byte {
			return [][]byte{packet(tok, 0, 0, infoPayload)[:HeaderLen+14]}
		},
	} {
		_, err := hostileClient(t, scripted(t, reply)).Query(ChunkServerInfo)
		var bad *BadAnswerError
		if !errors.As(err, &bad) || !strings.Contains(bad.What, want) {
			t.Errorf("err %v; want a BadAnswerError saying %q", err, want)
		}
	}
}

// A reply larger than MaxClientPayload is refused.
func TestClientHugeReply(t *testing.T) {
	big := make([]byte, 65000)
	var packets [][]byte
	for i := range 20 {
		packets = append(packets, packet(7, byte(i), 255, big))
	}
	_, err := Reassemble(packets, 7)
	udptest.WantBadAnswer(t, err, "reply larger than 1048576 bytes")
}

// A query answered with a new challenge each time gets maxChallenges
// requests in all (the challenge's included), then ErrOnlyChallenges.
func TestClientEndlessChallenges(t *testing.T) {
	var n atomic.Int32
	addr := udptest.Answer(t, func(req []byte) [][]byte {
		return [][]byte{challengeOf(uint32(100 + n.Add(1)))}
	})
	_, err := hostileClient(t, addr).Query(AllChunks)
	if !errors.Is(err, ErrOnlyChallenges) || n.Load() != maxChallenges {
		t.Fatalf("%d requests, err %v; want %d and ErrOnlyChallenges", n.Load(), err, maxChallenges)
	}
}

// A challenge reply that is not 5 bytes of type 0 is dropped: a bad answer
// at the deadline, not a timeout.
func TestClientBadChallenge(t *testing.T) {
	invalid := vector(t, "challenge_invalid_response") // a query reply's type byte
	addr := udptest.Answer(t, func([]byte) [][]byte { return [][]byte{invalid, {0, 0, 0, 1}} })
	start := time.Now()
	_, err := hostileClient(t, addr).Challenge()
	udptest.InTime(t, start)
	udptest.WantBadAnswer(t, err, "want a 5-byte challenge reply, got 4 bytes of type 0x0 (2 replies dropped)")
}
