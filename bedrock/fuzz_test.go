package bedrock

import (
	"bytes"
	"errors"
	"testing"

	"github.com/queryd/queryd/dgram"
)

// FuzzParsePing: any datagram parses or errs without panicking; the
// handler answers exactly the pings it parses, with one pong of at most
// MaxPong bytes echoing the ping's time, and nothing else.
func FuzzParsePing(f *testing.F) {
	f.Add(unhex(f, mcsuPing))
	f.Add(unhex(f, gamedigPing))
	f.Add([]byte{})
	f.Add(append([]byte{0x05}, Magic[:]...))
	f.Add(append(append([]byte{0x02}, make([]byte, 8)...), Magic[:]...))
	h := newTestHandler(f, vanillaConfig, vanillaSnapshot())
	scratch := make([]byte, MaxPong)
	f.Fuzz(func(t *testing.T, p []byte) {
		ping, err := ParsePing(p)
		if err == nil && (!Claims(p) || len(p) != PingLen || ping.ID != IDPing && ping.ID != IDPingOpenConn) {
			t.Fatalf("parsed % x as %+v", p, ping)
		}
		out, oc := h.Answer(p, clientA, scratch, nil)
		if err != nil {
			if oc != dgram.Malformed || len(out) != 0 {
				t.Fatalf("% x: unparsable but outcome %v, %d datagrams", p, oc, len(out))
			}
			return
		}
		if oc != dgram.AnsweredOpen || len(out) != 1 || len(out[0]) > MaxPong || !bytes.Equal(out[0][1:9], p[1:9]) {
			t.Fatalf("% x: outcome %v, %d datagrams", p, oc, len(out))
		}
	})
}

// FuzzParsePong: the client's parsers never panic; every error is a
// BadAnswerError; a pong they accept has a status length equal to the
// bytes after the header.
func FuzzParsePong(f *testing.F) {
	h := newTestHandler(f, vanillaConfig, vanillaSnapshot())
	out, _ := h.Answer(unhex(f, mcsuPing), clientA, make([]byte, MaxPong), nil)
	f.Add(out[0])
	f.Add([]byte{IDPong})
	f.Add(append(append(append([]byte{IDPong}, make([]byte, 16)...), Magic[:]...), 0, 6, 'a', ';', 'b', ';', ';', ';'))
	f.Fuzz(func(t *testing.T, p []byte) {
		pong, err := ParsePong(p)
		var bad *BadAnswerError
		if err != nil {
			if !errors.As(err, &bad) {
				t.Fatalf("% x: %v is not a BadAnswerError", p, err)
			}
			return
		}
		if len(pong.Raw) != len(p)-PongHeaderLen {
			t.Fatalf("% x: accepted with a status of %d bytes", p, len(pong.Raw))
		}
		if _, err := ParseStatus(string(p)); err != nil && !errors.As(err, &bad) {
			t.Fatalf("ParseStatus: %v is not a BadAnswerError", err)
		}
	})
}
