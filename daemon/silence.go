package daemon

import (
	"time"

	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/internal/activity"
	"github.com/queryd/queryd/upstream"
)

// State is what a server answers (queryd_server_state's "state", /healthz's
// and /status.json's "state"): the liveness contract of feed/doc.go.
type State string

// The states of a server.
const (
	// StateAnswering: every protocol answers the game's current state (a
	// feeder's, or the [upstream] game server's answers).
	StateAnswering State = "answering"
	// StateNotFed: no source has sent the game's state yet; every protocol
	// answers [server], the config's placeholders.
	StateNotFed State = "not_fed"
	// StateAsleep: [sleep]: the game server is stopped on purpose (or
	// being stopped or woken); every protocol answers the last state it
	// had, with no players, and no source is stale (package sleep).
	StateAsleep State = "asleep"
	// StateSilent: no protocol answers anything (Reason says why).
	StateSilent State = "silent"
	// StateDown: the server does not run (its file refused, its start or
	// a part of it failed); only the host reports it.
	StateDown State = "down"
)

// States are the states in the order queryd_server_state exports them.
var States = []State{StateAnswering, StateNotFed, StateAsleep, StateSilent, StateDown}

// Reason says why queryd is silent (the "reason" of /status.json's
// "silent" object and of /healthz).
type Reason string

// The reasons queryd is silent.
const (
	// ReasonFeed: the feed had activity and then none for [feed]
	// stale_after.
	ReasonFeed Reason = "feed"
	// ReasonUpstream: the [upstream] game server answered and then did not
	// for stale_after.
	ReasonUpstream Reason = "upstream"
	// ReasonUnanswered: the [upstream] game server has not answered since
	// queryd started.
	ReasonUnanswered Reason = "upstream_unanswered"
	// ReasonAgonesStarting: [agones]: no GameServer has been read since
	// queryd started, or it is not ready yet (Scheduled, RequestReady).
	ReasonAgonesStarting Reason = "agones_starting"
	// ReasonAgonesStopped: [agones]: the GameServer is going or gone
	// (Shutdown, Unhealthy, Error, or a state queryd does not know).
	ReasonAgonesStopped Reason = "agones_stopped"
	// ReasonAgones: [agones]: the SDK server was read and then gave
	// nothing readable for stale_after (killed, hung, or sending only what
	// queryd refuses).
	ReasonAgones Reason = "agones"
)

// Reasons are the reasons queryd is silent, as queryd_server_state,
// /healthz and /status.json name them.
var Reasons = []Reason{ReasonFeed, ReasonUpstream, ReasonUnanswered, ReasonAgonesStarting, ReasonAgonesStopped, ReasonAgones}

// maxCauses bounds the causes a Silence holds: one per source.
const maxCauses = 4

// Causes are the causes of silence that hold at one moment, the one that
// began first first. It is a value (comparable, no allocation).
type Causes struct {
	r [maxCauses]Reason
	n int
}

// List returns the causes, the first first.
func (c Causes) List() []Reason { return append([]Reason(nil), c.r[:c.n]...) }

// Has reports whether r is one of the causes.
func (c Causes) Has(r Reason) bool {
	for _, x := range c.r[:c.n] {
		if x == r {
			return true
		}
	}
	return false
}

// Silence is what a server answers at one moment (its State), why, since
// when, and when that next changes by itself. While it is silent no
// protocol answers anything (not even a challenge), on the socket path and
// in the XDP program, /healthz says 503, the status page shows a banner
// and queryd_server_state says "silent".
type Silence struct {
	State State
	// Silent is State == StateSilent.
	Silent bool
	// Reason is the cause that began first ("" unless silent); Causes
	// are every cause that holds.
	Reason Reason
	Causes Causes
	// Since is when the state began: when queryd fell silent (the first
	// cause's start), when it began answering the game's state (the
	// latest source's current run), when the rest began (asleep: the
	// stop), or, not fed yet, when the server started.
	Since time.Time
	// Deadline is, while queryd answers, when it falls silent unless a
	// source speaks before (zero: nothing can silence it: no stale_after,
	// or no source has spoken yet); zero while it is silent (that ends
	// with the next feed message or answer) and while it is asleep (that
	// ends with a wake, which tells the XDP program).
	Deadline time.Time
	// Fed reports whether a source has sent the game's state (a feeder's
	// accepted replace or patch, the game server's answer).
	Fed bool
}

// From is when the XDP program must be silent from: Since while queryd is
// silent, else Deadline (zero: never).
func (s Silence) From() time.Time {
	if s.Silent {
		return s.Since
	}
	return s.Deadline
}

// source is one place a server's state comes from (the feed, the
// [upstream] game server, the Agones GameServer), as the silence rule
// reads it. A stale source is a cause of silence; whether it is stale is
// its owner's rule (feed.Server.Stale, upstream.Poller.Stale,
// agones.Watcher.Stale, which also log their own changes).
type source interface {
	// stale reports whether the source is stale at now (it then silences
	// the server). It is asked once per receive batch: it allocates
	// nothing.
	stale(now time.Time) bool
	// cause is, while the source is stale, why and since when.
	cause() (Reason, time.Time)
	// deadline is, while it is not, when it will be by itself (zero:
	// never).
	deadline() time.Time
	// fed reports whether the source has sent the game's state, and since
	// when its current run of activity has lasted (zero: no activity yet).
	fed() (bool, time.Time)
}

// silence owns the rule "what does the server answer": its last state
// with no players while it is asleep ([sleep]: its game server stopped on
// purpose, or being stopped or woken; no source is stale then, and from
// the wake their quiet counts from it), else nothing while a source is
// stale (the feed stale, the [upstream] game server stale or not yet
// answered, the Agones GameServer not read yet, not taking players or not
// read for stale_after), else the game's state once a source has sent it,
// else [server]. The socket path (the responder's Silent and
// module.Env.Silent), the XDP program's deadline, /healthz, the status page
// and queryd_server_state all read it.
type silence struct {
	start   time.Time // when the server was made: not fed since then
	sources []source
	rest    *activity.Rest // the server's rest ([sleep]); nil: never rests
}

// at returns the silence at now. It allocates nothing.
func (s *silence) at(now time.Time) Silence {
	if s.rest.Resting() {
		return s.asleep()
	}
	var out Silence
	for _, src := range s.sources {
		if !src.stale(now) {
			continue
		}
		r, since := src.cause()
		if !out.Silent || since.Before(out.Since) {
			out.Reason, out.Since = r, since
			copy(out.Causes.r[1:], out.Causes.r[:out.Causes.n])
			out.Causes.r[0] = r
		} else {
			out.Causes.r[out.Causes.n] = r
		}
		out.Causes.n++
		out.Silent = true
	}
	for _, src := range s.sources {
		fed, since := src.fed()
		out.Fed = out.Fed || fed
		if !out.Silent && since.After(out.Since) {
			out.Since = since
		}
	}
	if out.Silent {
		out.State = StateSilent
		return out
	}
	out.State = StateAnswering
	if !out.Fed {
		out.State, out.Since = StateNotFed, s.start
	}
	for _, src := range s.sources {
		if d := src.deadline(); !d.IsZero() && (out.Deadline.IsZero() || d.Before(out.Deadline)) {
			out.Deadline = d
		}
	}
	return out
}

// asleep is the silence while the server rests: asleep since the rest
// began, never silent, no deadline (its end is a wake, which tells).
func (s *silence) asleep() Silence {
	out := Silence{State: StateAsleep, Since: s.rest.Since()}
	for _, src := range s.sources {
		fed, _ := src.fed()
		out.Fed = out.Fed || fed
	}
	return out
}

// silent reports whether queryd is silent at now: the responder's Silent
// (once per receive batch and server: the causes only, no times),
// module.Env.Silent. Asleep, it is not.
func (s *silence) silent(now time.Time) bool {
	if s.rest.Resting() {
		return false
	}
	for _, src := range s.sources {
		if src.stale(now) {
			return true
		}
	}
	return false
}

// from is the XDP program's input: when it must be silent from (zero:
// never).
func (s *silence) from() time.Time { return s.at(time.Now()).From() }

// feedSource is the feed as a source: it silences the server once it had
// activity and then none for stale_after (counted from the wake, after a
// rest).
type feedSource struct {
	f     *feed.Server
	after time.Duration
	rest  *activity.Rest
}

func (f feedSource) stale(now time.Time) bool { return f.f.Stale(now) }

func (f feedSource) cause() (Reason, time.Time) {
	return ReasonFeed, f.rest.From(f.f.LastFed()).Add(f.after)
}

func (f feedSource) deadline() time.Time {
	if last := f.rest.From(f.f.LastFed()); f.after > 0 && !last.IsZero() {
		return last.Add(f.after)
	}
	return time.Time{}
}

func (f feedSource) fed() (bool, time.Time) { return !f.f.Fed().IsZero(), f.f.LiveSince() }

// upstreamSource is the [upstream] game server as a source: it silences
// the server until its first good answer and once it has not answered
// for stale_after (counted from the wake, after a rest).
type upstreamSource struct {
	p     *upstream.Poller
	after time.Duration
	start time.Time
	rest  *activity.Rest
}

func (u upstreamSource) stale(now time.Time) bool { return u.p.Stale(now) }

func (u upstreamSource) cause() (Reason, time.Time) {
	last := u.p.LastAnswer()
	if last.IsZero() {
		return ReasonUnanswered, u.start
	}
	return ReasonUpstream, u.rest.From(last).Add(u.after)
}

func (u upstreamSource) deadline() time.Time {
	if last := u.rest.From(u.p.LastAnswer()); u.after > 0 && !last.IsZero() {
		return last.Add(u.after)
	}
	return time.Time{}
}

func (u upstreamSource) fed() (bool, time.Time) {
	since := u.p.AnsweringSince()
	return !since.IsZero(), since
}

// newSilence makes the server's silence value over the feed, the poller
// and the Agones watcher (made before it); it is no part of its own (nil
// part).
func (s *Server) newSilence() (part, error) {
	after := time.Duration(s.cfg.Feed.StaleAfter)
	sl := &silence{start: time.Now(), sources: []source{feedSource{f: s.feed, after: after, rest: s.rest}}, rest: s.rest}
	if s.upstream != nil {
		sl.sources = append(sl.sources, upstreamSource{p: s.upstream, after: after, start: sl.start, rest: s.rest})
	}
	if s.agones != nil {
		sl.sources = append(sl.sources, agonesSource{w: s.agones, after: after, start: sl.start})
	}
	s.silence = sl
	return nil, nil
}

// Silence returns whether the first server is silent now, why and since
// when.
func (d *Daemon) Silence() Silence { return d.first().Silence() }
