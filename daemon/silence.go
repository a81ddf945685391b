package daemon

import "time"

// Reason says why queryd is silent (the "reason" of /status.json's
// "silent" object and of /healthz).
type Reason string

// The reasons queryd is silent.
const (
	// ReasonFeed: the feed spoke and then sent nothing for [feed]
	// stale_after.
	ReasonFeed Reason = "feed"
	// ReasonUpstream: the [upstream] game server answered and then did not
	// for stale_after.
	ReasonUpstream Reason = "upstream"
	// ReasonUnanswered: the [upstream] game server has not answered since
	// queryd started.
	ReasonUnanswered Reason = "upstream_unanswered"
)

// Silence is whether queryd is silent at one moment, why, since when, and
// when that next changes by itself. While it is silent no protocol answers
// anything (not even a challenge), on the socket path and in the XDP
// program, /healthz says 503, the status page shows a banner and
// queryd_silent is 1.
type Silence struct {
	Silent bool
	// Reason is the cause that began first ("" while answering); Feed and
	// Upstream say which causes hold (both may).
	Reason Reason
	Feed   bool
	// Upstream is the game server's cause, ReasonUpstream or
	// ReasonUnanswered ("": the game server is none).
	Upstream Reason
	// Since is when queryd fell silent (the first cause's start); zero
	// while it answers.
	Since time.Time
	// Deadline is, while queryd answers, when it falls silent unless the
	// feed speaks or the game server answers before (zero: nothing can
	// silence it: no stale_after, or neither has spoken yet); zero while
	// it is silent (that ends with the next feed message or answer).
	Deadline time.Time
}

// From is when the XDP program must be silent from: Since while queryd is
// silent, else Deadline (zero: never).
func (s Silence) From() time.Time {
	if s.Silent {
		return s.Since
	}
	return s.Deadline
}

// silence owns the rule "is queryd silent": the feed stale, or the
// [upstream] game server stale or not yet answered. The socket path (the
// responder's Silent and module.Env.Stale), the XDP program's deadline,
// /healthz, the status page and queryd_silent all read it. Whether each
// cause holds is its owner's (feed.Server.Stale, upstream.Poller.Stale,
// which also log their own changes); silence combines them and adds the
// times.
type silence struct {
	after      time.Duration // [feed] stale_after (both causes')
	start      time.Time     // when the daemon was made: "unanswered" since then
	feedStale  func(now time.Time) bool
	lastFed    func() time.Time
	upStale    func(now time.Time) bool // nil without [upstream]
	lastAnswer func() time.Time         // nil without [upstream]
}

// at returns the silence at now. It allocates nothing (the responder asks
// it once per receive batch).
func (s *silence) at(now time.Time) Silence {
	var out Silence
	cause := func(r Reason, since time.Time) {
		if !out.Silent || since.Before(out.Since) {
			out.Reason, out.Since = r, since
		}
		out.Silent = true
	}
	fed := s.lastFed()
	feed, up := s.causes(now)
	if feed {
		out.Feed = true
		cause(ReasonFeed, fed.Add(s.after))
	}
	var answered time.Time
	if s.upStale != nil {
		answered = s.lastAnswer()
		if up {
			out.Upstream = ReasonUpstream
			since := answered.Add(s.after)
			if answered.IsZero() {
				out.Upstream, since = ReasonUnanswered, s.start
			}
			cause(out.Upstream, since)
		}
	}
	if out.Silent || s.after <= 0 {
		return out
	}
	for _, last := range []time.Time{fed, answered} {
		if last.IsZero() {
			continue
		}
		if d := last.Add(s.after); out.Deadline.IsZero() || d.Before(out.Deadline) {
			out.Deadline = d
		}
	}
	return out
}

// causes reports which causes hold at now: the feed stale, the game server
// stale or not yet answered. queryd is silent when either does.
func (s *silence) causes(now time.Time) (feed, upstream bool) {
	return s.feedStale(now), s.upStale != nil && s.upStale(now)
}

// silent reports whether queryd is silent at now: the responder's Silent
// (once per receive batch and server: the causes only, no times),
// module.Env.Stale.
func (s *silence) silent(now time.Time) bool {
	feed, up := s.causes(now)
	return feed || up
}

// from is the XDP program's input: when it must be silent from (zero:
// never).
func (s *silence) from() time.Time { return s.at(time.Now()).From() }

// newSilence makes the daemon's silence value over the feed and the
// poller (made before it); it is no part of its own (nil part).
func (s *Server) newSilence() (part, error) {
	sl := &silence{
		after:     time.Duration(s.cfg.Feed.StaleAfter),
		start:     time.Now(),
		feedStale: s.feed.Stale,
		lastFed:   s.feed.LastFed,
	}
	if s.upstream != nil {
		sl.upStale, sl.lastAnswer = s.upstream.Stale, s.upstream.LastAnswer
	}
	s.silence = sl
	return nil, nil
}

// Silence returns whether the first server is silent now, why and since
// when.
func (d *Daemon) Silence() Silence { return d.first().Silence() }
