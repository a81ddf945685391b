package sagl

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/udptest"
)

// Malicious SAGL servers on loopback: every call must end by its timeout
// with the error that names what the server did, keeping nothing the
// protocol does not allow.

// hostileClient dials addr with a short timeout.
func hostileClient(t *testing.T, addr string) *Client {
	t.Helper()
	c := dialTest(t, addr)
	c.Timeout, c.Retry = udptest.HostileTimeout, 100*time.Millisecond
	return c
}

// rawPart is an info reply with any header fields and data.
func rawPart(serial, total uint32, part, parts uint16, data []byte) []byte {
	b := appendReplyHeader(nil, KindInfo)
	b = binary.LittleEndian.AppendUint32(b, serial)
	b = binary.LittleEndian.AppendUint32(b, total)
	b = binary.LittleEndian.AppendUint16(b, part)
	b = binary.LittleEndian.AppendUint16(b, parts)
	return append(b, data...)
}

// rawPiece is a logo reply with any header fields and data.
func rawPiece(size, off uint32, sum [32]byte, data []byte) []byte {
	b := appendReplyHeader(nil, KindLogo)
	b = binary.LittleEndian.AppendUint32(b, size)
	b = binary.LittleEndian.AppendUint32(b, off)
	b = append(b, sum[:]...)
	return append(b, data...)
}

// budget bounds what a flooding server sends in a whole test.
type budget struct{ left atomic.Int64 }

func newBudget(n int64) *budget {
	b := &budget{}
	b.left.Store(n)
	return b
}

func (b *budget) take() bool { return b.left.Add(-1) >= 0 }

// Parts of any size (issue item 1): 64 KB datagrams claiming to be parts of
// a 16 MiB JSON in 65,535 parts were kept until the timeout (1 GiB in 3 s).
// Now every datagram over 1,200 bytes is dropped, and the call says so.
func TestClientHostileOversizedParts(t *testing.T) {
	// The 500 datagrams are made before the call: made per request, their
	// 30 MB (hashed) took the stand-in server longer than the client's
	// timeout on a loaded machine under -race, and the call saw nothing.
	data := make([]byte, 60000)
	parts := make([][]byte, 500)
	for i := range parts {
		parts[i] = rawPart(7, MaxJSON, uint16(i), MaxParts, data)
	}
	b := newBudget(2000)
	addr := udpServer(t, func([]byte, netip.AddrPort, []byte) [][]byte {
		var out [][]byte
		for i := 0; i < len(parts) && b.take(); i++ {
			out = append(out, parts[i])
		}
		return out
	})
	c := hostileClient(t, addr)
	start := time.Now()
	_, err := c.Info()
	udptest.InTime(t, start)
	udptest.WantBadAnswer(t, err, "datagram of 60020 bytes, over the protocol's 1200")
}

// Parts that fit a datagram but add up past the JSON's total are dropped:
// a server claiming 2 parts' worth in 65,535 parts cannot make the client
// keep 77 MB.
func TestClientHostilePartsPastTotal(t *testing.T) {
	data := make([]byte, PartSize)
	b := newBudget(20000)
	var sent atomic.Int32
	addr := udpServer(t, func([]byte, netip.AddrPort, []byte) [][]byte {
		var out [][]byte
		for i := 0; i < 2000 && b.take(); i++ {
			out = append(out, rawPart(7, 2*PartSize, uint16(sent.Add(1)), MaxParts, data))
		}
		return out
	})
	c := hostileClient(t, addr)
	start := time.Now()
	_, err := c.Info()
	udptest.InTime(t, start)
	udptest.WantBadAnswer(t, err, "adding up past the JSON's 2360 bytes")
}

// A part whose header fits but whose JSON cannot fit its parts, or over
// the client's 16 MiB, is dropped with its reason.
func TestClientHostilePartHeaders(t *testing.T) {
	for name, c := range map[string]struct {
		part []byte
		want string
	}{
		"over MaxJSON":     {rawPart(1, MaxJSON+1, 0, MaxParts, []byte("{")), "over the client's " + strconv.Itoa(MaxJSON)},
		"total past parts": {rawPart(1, 2*PartSize+1, 0, 2, []byte("{")), "in 2 parts of at most 1180"},
		"part past parts":  {rawPart(1, 10, 2, 2, []byte("{")), "info part 2 of 2"},
		"a logo piece":     {rawPiece(10, 0, [32]byte{}, []byte("0123456789")), "not an info part"},
	} {
		t.Run(name, func(t *testing.T) {
			addr := udpServer(t, func([]byte, netip.AddrPort, []byte) [][]byte { return [][]byte{c.part} })
			_, err := hostileClient(t, addr).Info()
			udptest.WantBadAnswer(t, err, c.want)
		})
	}
}

// challengeServer answers every request with a challenge: a new token each
// time, or always the same. It counts the requests.
func challengeServer(t *testing.T, newToken bool) (string, *atomic.Int32) {
	var n atomic.Int32
	addr := udpServer(t, func(_ []byte, _ netip.AddrPort, scratch []byte) [][]byte {
		tok := uint32(5)
		if i := n.Add(1); newToken {
			tok += uint32(i)
		}
		return [][]byte{PutChallenge(scratch, tok)}
	})
	return addr, &n
}

// A server answering every request with a new challenge (issue item 3:
// 17,800 requests in 2.25 s) gets maxChallenges requests, then the call
// says "answers only with challenges"; one repeating the same challenge
// gets a request per retry, not per challenge.
func TestClientHostileEndlessChallenges(t *testing.T) {
	for _, logo := range []bool{false, true} {
		for _, newToken := range []bool{true, false} {
			addr, requests := challengeServer(t, newToken)
			c := hostileClient(t, addr)
			start := time.Now()
			var err error
			if logo {
				_, err = c.Logo()
			} else {
				_, err = c.Info()
			}
			udptest.InTime(t, start)
			most := int32(maxChallenges)
			if !newToken {
				most = int32(udptest.HostileTimeout/c.Retry) + 2
			}
			if !errors.Is(err, ErrOnlyChallenges) || !strings.Contains(err.Error(), "answers only with challenges") || requests.Load() > most {
				t.Errorf("logo %v, new token %v: %d requests (at most %d), err %v; want ErrOnlyChallenges",
					logo, newToken, requests.Load(), most, err)
			}
		}
	}
}

// jsonServer answers a challenge, then the JSON js in parts, as queryd does.
func jsonServer(t *testing.T, js string) string {
	return udpServer(t, func(req []byte, _ netip.AddrPort, scratch []byte) [][]byte {
		if binary.LittleEndian.Uint32(req[8:]) == 0 {
			return [][]byte{PutChallenge(scratch, 9)}
		}
		return EncodeParts([]byte(js), 3)
	})
}

// A JSON nested deeper than MaxDepth, or not an object at the top, is a bad
// answer (encoding/json alone takes 10,000 levels, and null into a struct).
func TestClientHostileJSON(t *testing.T) {
	deep := `{"values":{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}}`
	for js, want := range map[string]string{
		deep:                      "nests deeper than 64",
		`null`:                    "not an object",
		` [{"query":1}]`:          "not an object",
		`{"query":1,"name":`:      "the JSON: unexpected end",
		`{"name":"a [[[[[[[["}`:   "", // brackets inside strings do not count
		`{"name":"\"[[[[[[[[\\"}`: "",
	} {
		_, err := hostileClient(t, jsonServer(t, js)).Info()
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", js, err)
			}
			continue
		}
		udptest.WantBadAnswer(t, err, want)
	}
}

// checkJSON's limits, exactly: MaxDepth levels and MaxItems items pass,
// one more fails; brackets and commas inside strings do not count.
func TestCheckJSON(t *testing.T) {
	items := func(n int) string { // the object, its member, the array and n-3 elements
		return `{"a":[` + strings.Repeat("0,", n-4) + `0]}`
	}
	nest := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	for js, want := range map[string]string{
		items(MaxItems):             "",
		items(MaxItems + 1):         "more than 131072 items",
		`{"a":[{},[],{"b":[1,2]}]}`: "",
		nest(MaxDepth):              "",
		nest(MaxDepth + 1):          "nests deeper than 64",
		`{"a":"[[[,,,{{{\"]]]"}`:    "",
		"\t\r\n {}":                 "",
		"":                          "not an object",
		"null":                      "not an object",
		`"{"`:                       "not an object",
	} {
		err := checkJSON([]byte(js))
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%.40s: err %v, want %q", js, err, want)
		}
	}
	var s jsonScan
	for _, b := range []byte(`{"a":[{},[],{"b":[1,2]}], "c" : "x,{"}`) {
		s.next(b)
	}
	// the object and its 2 members; the array, its 3 elements, which are 3
	// containers; b in the last; its array and 2 elements
	if s.items != 14 || s.depth != 0 {
		t.Errorf("%d items, depth %d; want 14 and 0", s.items, s.depth)
	}
}

// pieceServer answers each logo request with what piece returns for its
// offset.
func pieceServer(t *testing.T, piece func(off uint32, n int32) []byte) string {
	var n atomic.Int32
	return udpServer(t, func(req []byte, _ netip.AddrPort, scratch []byte) [][]byte {
		if binary.LittleEndian.Uint32(req[8:]) == 0 {
			return [][]byte{PutChallenge(scratch, 9)}
		}
		return [][]byte{piece(binary.LittleEndian.Uint32(req[12:]), n.Add(1))}
	})
}

// The logo: a hash that does not match is a bad answer; so are pieces of
// another logo than the first piece's (they are not mixed in), a logo over
// MaxLogo and pieces that do not fit their logo.
func TestClientHostileLogo(t *testing.T) {
	data := make([]byte, 3000)
	sum := sha256.Sum256(data)
	other := sum
	other[0] ^= 1
	for name, c := range map[string]struct {
		piece func(off uint32, n int32) []byte
		want  string
	}{
		"hash mismatch": {func(off uint32, _ int32) []byte {
			return rawPiece(3000, off, other, data[off:min(int(off)+LogoPiece, 3000)])
		}, "does not match its SHA-256"},
		"hash changes": {func(off uint32, n int32) []byte {
			s := sum
			if n > 1 {
				s = other
			}
			return rawPiece(3000, off, s, data[off:min(int(off)+LogoPiece, 3000)])
		}, "piece of another logo"},
		"over MaxLogo": {func(off uint32, _ int32) []byte {
			return rawPiece(MaxLogo+1, off, sum, make([]byte, LogoPiece))
		}, "over the client's " + strconv.Itoa(MaxLogo)},
		"piece too short": {func(off uint32, _ int32) []byte {
			return rawPiece(3000, off, sum, data[:10])
		}, "does not fit a logo of 3000"},
	} {
		t.Run(name, func(t *testing.T) {
			c2 := hostileClient(t, pieceServer(t, c.piece))
			start := time.Now()
			_, err := c2.Logo()
			udptest.InTime(t, start)
			udptest.WantBadAnswer(t, err, c.want)
		})
	}
}

// A server sending parts of a JSON that never completes (lost packets, a
// rate limit) ends in a timeout that says how far it got: not a bad answer.
func TestClientIncompleteIsTimeout(t *testing.T) {
	addr := udpServer(t, func(req []byte, _ netip.AddrPort, scratch []byte) [][]byte {
		if binary.LittleEndian.Uint32(req[8:]) == 0 {
			return [][]byte{PutChallenge(scratch, 9)}
		}
		return [][]byte{rawPart(1, 3*PartSize, 0, 3, make([]byte, PartSize))}
	})
	_, err := hostileClient(t, addr).Info()
	var bad *BadAnswerError
	if errors.As(err, &bad) || !errors.Is(err, os.ErrDeadlineExceeded) || !strings.Contains(err.Error(), "1 of 3 parts") {
		t.Fatalf("err %v; want a timeout saying 1 of 3 parts", err)
	}
}
