package bedrock

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/udptest"
)

// Malicious or confused Bedrock servers on loopback: every ping ends by its
// timeout with the error that names what the server did.

func hostileClient(t *testing.T, addr string) *Client {
	t.Helper()
	c := udptest.Dial(t, Dial, addr)
	c.Timeout = udptest.HostileTimeout
	return c
}

const okStatus = "MCPE;Fine;766;1.21.50;1;10;1;m;Survival;1;19132;19132;"

// Datagrams that are not a pong, and pongs to another ping, are dropped;
// the pong to this ping after them is taken.
func TestClientDropsStaleReplies(t *testing.T) {
	addr := udptest.Answer(t, func(req []byte) [][]byte {
		tm := binary.BigEndian.Uint64(req[1:9])
		return [][]byte{{0x1C}, []byte("garbage"), pongOf(tm-1, 5, "MCPE;Late;1;v;0;1;"), pongOf(tm, 5, okStatus)}
	})
	c := hostileClient(t, addr)
	for i := 0; i < 2; i++ { // the second ping's time is later than the first's
		p, err := c.Ping()
		if err != nil || p.Status.MOTD != "Fine" || p.ServerGUID != 5 {
			t.Fatalf("ping %d: %+v, %v", i, p, err)
		}
	}
}

// Only replies the client cannot use: a bad answer at the deadline, not a
// timeout.
func TestClientOnlyStaleReplies(t *testing.T) {
	addr := udptest.Answer(t, func(req []byte) [][]byte {
		return [][]byte{pongOf(binary.BigEndian.Uint64(req[1:9])+1, 5, okStatus)}
	})
	start := time.Now()
	_, err := hostileClient(t, addr).Ping()
	udptest.InTime(t, start)
	udptest.WantBadAnswer(t, err, "not this ping's")
}

// A pong to this ping that lies about its length, or whose status lacks a
// field, is a bad answer at once.
func TestClientBrokenPong(t *testing.T) {
	for status, want := range map[string]string{
		"MCPE;a;1;v":      "status string has 4 fields",
		"MCPE;a;x;v;0;1;": `protocol "x" is not a number`,
	} {
		addr := udptest.Answer(t, func(req []byte) [][]byte { return [][]byte{pongOf(binary.BigEndian.Uint64(req[1:9]), 5, status)} })
		_, err := hostileClient(t, addr).Ping()
		var bad *BadAnswerError
		if !errors.As(err, &bad) || !strings.Contains(bad.What, want) {
			t.Errorf("%q: err %v; want a BadAnswerError saying %q", status, err, want)
		}
	}
	addr := udptest.Answer(t, func(req []byte) [][]byte {
		p := pongOf(binary.BigEndian.Uint64(req[1:9]), 5, okStatus)
		binary.BigEndian.PutUint16(p[33:], 60000)
		return [][]byte{p}
	})
	var bad *BadAnswerError
	if _, err := hostileClient(t, addr).Ping(); !errors.As(err, &bad) || !strings.Contains(bad.What, "status length 60000") {
		t.Errorf("length 60000: %v", err)
	}
}
