package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/sagl"
)

// A probe is one small request per protocol, the first a real client sends:
// what comes back (nothing, a challenge, or an answer) tells "no answer"
// from "answered only with challenges", and its round trip is the one
// queryd query -table shows.

// probeSpec is a protocol's first request and how to read its reply.
type probeSpec struct {
	req       []byte
	reply     func(p []byte) bool // p is this protocol's reply to req
	challenge func(p []byte) bool // the reply is a challenge, not an answer
}

var probeSession = [4]byte{0x01, 0x02, 0x03, 0x04}

var probes = map[string]probeSpec{
	"a2s": {
		req: []byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00"),
		reply: func(p []byte) bool {
			return len(p) >= 5 && bytes.HasPrefix(p, []byte{0xFF, 0xFF, 0xFF, 0xFF}) && (p[4] == 'A' || p[4] == 'I')
		},
		challenge: func(p []byte) bool { return p[4] == 'A' },
	},
	"gamespy4": {
		req: append([]byte{0xFE, 0xFD, 0x09}, probeSession[:]...),
		reply: func(p []byte) bool {
			return len(p) >= 5 && p[0] == 0x09 && [4]byte(p[1:5]) == probeSession
		},
		challenge: func([]byte) bool { return true }, // the handshake answers a token
	},
	"sagl": {
		req:   sagl.AppendRequest(nil, sagl.Request{Kind: sagl.KindInfo}),
		reply: func(p []byte) bool { return len(p) >= 6 && bytes.HasPrefix(p, []byte("SAGR")) },
		// The probe's token 0 always gets a challenge, which says nothing
		// about the query: the client itself says when only challenges
		// came (sagl.ErrOnlyChallenges).
		challenge: func([]byte) bool { return false },
	},
	"quake3": {
		req:       []byte("\xFF\xFF\xFF\xFFgetinfo queryd-probe"),
		reply:     func(p []byte) bool { return bytes.HasPrefix(p, []byte("\xFF\xFF\xFF\xFFinfoResponse")) },
		challenge: func([]byte) bool { return false }, // Quake 3 has no challenge
	},
}

// probeResult is what one probe saw.
type probeResult struct {
	ran       bool
	replied   bool
	challenge bool // the reply was a challenge
	refused   bool // ICMP port unreachable: nothing listens there
	rtt       time.Duration
}

// probe sends a protocol's first request and waits up to budget for its reply.
func probe(name, addr string, budget time.Duration) probeResult {
	spec, ok := probes[name]
	if !ok || budget <= 0 {
		return probeResult{}
	}
	res := probeResult{ran: true}
	conn, err := net.DialTimeout("udp", addr, budget)
	if err != nil {
		return res
	}
	defer conn.Close()
	start := time.Now()
	conn.SetDeadline(start.Add(budget))
	if _, err := conn.Write(spec.req); err != nil {
		res.refused = isRefused(err)
		return res
	}
	buf := make([]byte, 65536)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			res.refused = isRefused(err)
			return res
		}
		if p := buf[:n]; spec.reply(p) {
			res.replied, res.challenge, res.rtt = true, spec.challenge(p), time.Since(start)
			return res
		}
	}
}

func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// isTimeout reports whether err means "no (complete) answer in time".
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, errCutOff) || errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// isBadAnswer reports whether a client got a reply it could not use.
func isBadAnswer(err error) bool {
	var ba module.BadAnswer
	return errors.As(err, &ba)
}

// isOnlyChallenges reports whether a client gave up after challenges only.
func isOnlyChallenges(err error) bool { return errors.Is(err, module.ErrOnlyChallenges) }

// diagnosed reports whether err says by itself why the query failed, so
// that no probe is needed to explain it.
func diagnosed(err error) bool { return isBadAnswer(err) || isOnlyChallenges(err) }

// firstStep is the error prefix each protocol's query puts on its first
// request; an error with another prefix came after a first answer.
var firstStep = map[string]string{
	"a2s":      "A2S_INFO:",
	"gamespy4": "basic stat:",
	"quake3":   "getinfo:",
}

// failure explains why a protocol did not answer, in words an operator can
// act on, with the client's own error at the end: a reply the client could
// not use first, then a client that got only challenges, then the timeouts,
// told apart by the probe.
func (r queryResult) failure() string {
	err, p := r.err, r.probe
	why := err.Error()
	partial := firstStep[r.proto] != "" && !errors.Is(err, errCutOff) && !strings.HasPrefix(why, firstStep[r.proto])
	const challenges = "answered only with challenges: the server sent a challenge but did not answer the request carrying it back, so it refused the token (the source address changed between requests, e.g. behind NAT) or dropped the reply (rate limit) [%s]"
	switch {
	case isRefused(err) || p.refused:
		return fmt.Sprintf("nothing listens there: the host answered \"port unreachable\" (wrong port, or queryd not running) [%s]", why)
	case isBadAnswer(err), !isTimeout(err) && !isOnlyChallenges(err):
		return fmt.Sprintf("bad answer: %s", why)
	case isOnlyChallenges(err):
		return fmt.Sprintf(challenges, why)
	case partial:
		return fmt.Sprintf("answered the first request, then went silent: probably rate limited (queryd's [limits] per-IP byte budget, or the Quake 3 packet rate), else packets lost [%s]", why)
	case p.replied && p.challenge:
		return fmt.Sprintf(challenges, why)
	case p.replied:
		return fmt.Sprintf("answers a single request but not the whole query: probably rate limited, else packets lost [%s]", why)
	}
	return fmt.Sprintf("no answer: nothing came back (wrong host or port, a firewall dropping UDP, the protocol not enabled on the server, or queryd silent because its feed went stale) [%s]", why)
}
