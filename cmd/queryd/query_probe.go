package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/queryd/queryd/module"
)

// A probe is one small request per protocol, the first a real client sends:
// what comes back (nothing, a challenge, or an answer) tells "no answer"
// from "answered only with challenges", and its round trip is the one
// queryd query -table shows.

// probeResult is what one probe saw.
type probeResult struct {
	ran       bool
	replied   bool
	challenge bool // the reply was a challenge
	refused   bool // ICMP port unreachable: nothing listens there
	rtt       time.Duration
}

// probe sends a protocol's first request and waits up to budget for its reply.
func probe(spec module.Probe, addr string, budget time.Duration) probeResult {
	if budget <= 0 {
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
	if _, err := conn.Write(spec.Request); err != nil {
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
		if p := buf[:n]; spec.Reply(p) {
			res.replied, res.challenge, res.rtt = true, spec.Challenge(p), time.Since(start)
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

// partial reports whether err came after the query's first request was
// answered (a later step failed).
func partial(err error) bool {
	var se *module.StepError
	return errors.As(err, &se) && se.Step > 0
}

// failure explains why a protocol did not answer, in words an operator can
// act on, with the client's own error at the end: a reply the client could
// not use first, then a client that got only challenges, then the timeouts,
// told apart by the probe.
func (r queryResult) failure() string {
	err, p := r.err, r.probe
	why := err.Error()
	const challenges = "answered only with challenges: the server sent a challenge but did not answer the request carrying it back, so it refused the token (the source address changed between requests, e.g. behind NAT) or dropped the reply (rate limit) [%s]"
	switch {
	case isRefused(err) || p.refused:
		return fmt.Sprintf("nothing listens there: the host answered \"port unreachable\" (wrong port, or queryd not running) [%s]", why)
	case isBadAnswer(err), !isTimeout(err) && !isOnlyChallenges(err):
		return fmt.Sprintf("bad answer: %s", why)
	case isOnlyChallenges(err):
		return fmt.Sprintf(challenges, why)
	case partial(err):
		return fmt.Sprintf("answered the first request, then went silent: probably rate limited (%s), else packets lost [%s]", r.rateLimits(), why)
	case p.replied && p.challenge:
		return fmt.Sprintf(challenges, why)
	case p.replied:
		return fmt.Sprintf("answers a single request but not the whole query: probably rate limited (%s), else packets lost [%s]", r.rateLimits(), why)
	}
	rate := ""
	if r.rate != "" {
		rate = ", or too many requests from this address: " + r.rate
	}
	return fmt.Sprintf("no answer: nothing came back (wrong host or port, a firewall dropping UDP, the protocol not enabled on the server, or queryd silent: its feed or [upstream] game server went quiet, or its Agones GameServer is not Ready%s) [%s]", rate, why)
}

// rateLimits names the rate limits a query may have run into: the
// protocol's per-source rate when it has one, else queryd's.
func (r queryResult) rateLimits() string {
	if r.rate != "" {
		return r.rate
	}
	return "queryd's [limits] per-IP byte budget, or a protocol's per-source packet rate"
}

// unanswered reports whether nothing at all came back: the query timed out
// and its probe got no reply (nor "port unreachable").
func (r queryResult) unanswered() bool {
	return r.err != nil && isTimeout(r.err) && !isRefused(r.err) && !partial(r.err) && !isOnlyChallenges(r.err) &&
		!r.probe.replied && !r.probe.refused
}
