package sleep

import (
	"time"
)

// Phase is where a server is in its sleep cycle:
//
//	awake ──0 players──▶ idle ──after──▶ stopping ──stop ok──▶ asleep ──join or wake──▶ waking ──ready──▶ awake (or idle)
//	  ▲                   │                 │                    ▲                        │
//	  └────a player───────┘                 └──stop failed──▶ idle (retried later)        └──failed──▶ stopping (clean-up) ──▶ asleep
type Phase uint8

// The phases.
const (
	// Awake: the game server runs with players (or sleep is off).
	Awake Phase = iota
	// Idle: it runs with no players; after that long it is stopped.
	Idle
	// Stopping: stop runs (after idle, or to clean up after a failed wake).
	Stopping
	// Asleep: it is stopped; queryd answers its last state with 0 players.
	Asleep
	// Waking: start has been run; queryd waits for the game server to
	// answer, holding the joining players' datagrams.
	Waking
)

// Phases are the phases in order (queryd_sleep_phase's).
var Phases = []Phase{Awake, Idle, Stopping, Asleep, Waking}

// String names the phase as metrics, logs and /status.json do.
func (p Phase) String() string {
	switch p {
	case Awake:
		return "awake"
	case Idle:
		return "idle"
	case Stopping:
		return "stopping"
	case Asleep:
		return "asleep"
	case Waking:
		return "waking"
	}
	return "unknown"
}

// Resting reports whether the game server is stopped on purpose, or being
// stopped or started: the server's state is "asleep" (no source is stale).
func (p Phase) Resting() bool { return p >= Stopping }

// Cause is what asked for a wake.
type Cause uint8

// The causes of a wake.
const (
	// CauseJoin: a game datagram from a player (relay mode, or the XDP
	// program's report in divert mode).
	CauseJoin Cause = iota
	// CauseFeed: the feed's {"op":"wake"} (the game's matchmaking).
	CauseFeed
)

// Causes are the causes in order (queryd_sleep_wakes_total's).
var Causes = []Cause{CauseJoin, CauseFeed}

// String names the cause.
func (c Cause) String() string {
	if c == CauseFeed {
		return "feed"
	}
	return "join"
}

// Failure reasons of a wake (queryd_sleep_wake_failures_total's).
const (
	FailStart        = "start_failed"  // start exited non-zero (or could not run)
	FailStartTimeout = "start_timeout" // start had not exited by ready_timeout: killed
	FailNotReady     = "not_ready"     // start exited 0, the game server did not answer by ready_timeout
)

// FailReasons are the failure reasons in order.
var FailReasons = []string{FailStart, FailStartTimeout, FailNotReady}

// Verdict is what a join asked at one moment got.
type Verdict uint8

// The verdicts of Join.
const (
	// Running: the game server runs (awake, idle, or being stopped): the
	// datagram goes to it.
	Running Verdict = iota
	// Woken: it was asleep and a wake began.
	Woken
	// Pending: a wake is in progress (or, asked while stopping, will
	// begin once it is stopped).
	Pending
	// Refused: asleep, and wakes_per_hour wakes began in the last hour.
	Refused
	// Cleaning: a wake failed and stop runs to clean up after it: no wake
	// may begin until it is asleep again.
	Cleaning
)

// Action is a command the machine wants run; the Sleeper runs one at a
// time and reports its end (StopDone, StartDone).
type Action uint8

// The actions.
const (
	ActNone  Action = iota
	ActStop         // run stop
	ActStart        // run start
)

// maxStopBackoff bounds the wait before stop is tried again after it
// failed.
const maxStopBackoff = time.Hour

// Machine is the sleep state machine, without clocks, goroutines or
// commands: each event carries its time, and the commands it wants run
// are taken with Take. The Sleeper drives it under its lock; tests drive
// it with made-up times.
type Machine struct {
	after, ready time.Duration
	maxWakes     int

	phase     Phase
	since     time.Time // when the phase began
	restSince time.Time // when the current rest began (the stop before asleep); zero while awake
	people    int       // players who are not bots, as last told
	idleSince time.Time // when it last had no players (Idle)
	stopAfter time.Time // a failed stop: not again before this
	stopFails int       // failed stops in a row

	// The wake in progress (Waking), and the clean-up after a failed one.
	wakeAt  time.Time
	cause   Cause
	started bool // start exited 0
	cleanup bool // Stopping after a failed wake: to Asleep, whatever stop says
	pending bool // a wake asked while stopping: begins once asleep
	pendCau Cause

	wakes []time.Time // when the last wakes began, oldest first, at most maxWakes
	todo  Action
	out   Outcome
}

// Outcome is what the last event did that the Sleeper reports (logs,
// metrics) besides the phase: set by the event, cleared by Take.
type Outcome struct {
	Woke     bool          // a wake began (Cause)
	Cause    Cause         // its cause
	Ready    bool          // a wake ended well: the game server answers
	Took     time.Duration // … after this long
	Failed   string        // a wake failed: its reason (FailStart, …)
	Slept    bool          // the stop succeeded: asleep
	StopFail bool          // the stop failed: the game server is taken as running
	Retry    time.Time     // … and stop is tried again then
	Refused  bool          // a wake asked while stopping was refused when asleep: the hour's wakes are spent
}

// NewMachine makes the machine of a server whose game server is taken to
// run with no players from now: it is Idle (Awake when after is 0).
func NewMachine(s Settings, now time.Time) *Machine {
	m := &Machine{after: s.After, ready: s.ReadyTimeout, maxWakes: max(s.WakesPerHour, 1), phase: Awake, since: now}
	if m.after > 0 {
		m.phase, m.idleSince = Idle, now
	}
	return m
}

// Phase returns the phase and since when.
func (m *Machine) Phase() (Phase, time.Time) { return m.phase, m.since }

// RestSince is when the current rest began (zero while awake or idle).
func (m *Machine) RestSince() time.Time { return m.restSince }

// WakeAt is when the wake in progress began (zero unless Waking).
func (m *Machine) WakeAt() time.Time {
	if m.phase != Waking {
		return time.Time{}
	}
	return m.wakeAt
}

// Started reports whether the wake in progress has had start exit 0.
func (m *Machine) Started() bool { return m.phase == Waking && m.started }

// Take returns the command to run (ActNone: none) and what the events
// since the last Take did, and clears both.
func (m *Machine) Take() (Action, Outcome) {
	a, o := m.todo, m.out
	m.todo, m.out = ActNone, Outcome{}
	return a, o
}

func (m *Machine) enter(p Phase, now time.Time) { m.phase, m.since = p, now }

// Players tells the machine how many players who are not bots the game
// server has at now. While it rests the count is noted only.
func (m *Machine) Players(n int, now time.Time) {
	m.people = n
	switch {
	case m.after <= 0:
	case m.phase == Awake && n == 0:
		m.enter(Idle, now)
		m.idleSince = now
	case m.phase == Idle && n > 0:
		m.enter(Awake, now)
		m.stopFails, m.stopAfter = 0, time.Time{}
	}
}

// Unanswered tells the machine that the game server has not answered at
// all since queryd started, ready_timeout ago: it is taken to be stopped
// already (queryd restarted while it slept), and stop runs at once to
// make sure, instead of after after, while queryd would be silent.
func (m *Machine) Unanswered(now time.Time) {
	if m.phase != Idle || m.people > 0 {
		return
	}
	m.enter(Stopping, now)
	m.restSince = now
	m.todo = ActStop
}

// Next is when Tick next has something to do (zero: nothing will be due
// until another event).
func (m *Machine) Next() time.Time {
	switch m.phase {
	case Idle:
		return later(m.idleSince.Add(m.after), m.stopAfter)
	case Waking:
		return m.wakeAt.Add(m.ready)
	}
	return time.Time{}
}

// Tick moves the machine on at now: an idle server due to sleep is
// stopped; a wake not done by ready_timeout fails.
func (m *Machine) Tick(now time.Time) {
	next := m.Next()
	if next.IsZero() || now.Before(next) {
		return
	}
	switch m.phase {
	case Idle:
		m.enter(Stopping, now)
		m.restSince = now
		m.todo = ActStop
	case Waking:
		if m.started {
			m.fail(FailNotReady, now)
		} else {
			m.fail(FailStartTimeout, now)
		}
	}
}

// Join asks for a wake at now with cause: what the caller does with the
// datagram (or the feed with its reply) follows from the verdict.
func (m *Machine) Join(cause Cause, now time.Time) Verdict {
	switch m.phase {
	case Asleep:
		if !m.mayWake(now) {
			return Refused
		}
		m.wake(cause, now)
		return Woken
	case Waking:
		return Pending
	case Stopping:
		if m.cleanup {
			return Cleaning
		}
		if !m.pending {
			m.pending, m.pendCau = true, cause
		}
		return Pending
	}
	return Running
}

// mayWake reports whether a wake may begin at now: fewer than
// wakes_per_hour began in the hour before.
func (m *Machine) mayWake(now time.Time) bool { return m.wakesSince(now.Add(-time.Hour)) < m.maxWakes }

// wakesSince is how many of the wakes remembered began after t.
func (m *Machine) wakesSince(t time.Time) int {
	n := 0
	for _, w := range m.wakes {
		if w.After(t) {
			n++
		}
	}
	return n
}

// wake begins a wake at now.
func (m *Machine) wake(cause Cause, now time.Time) {
	if len(m.wakes) == m.maxWakes {
		m.wakes = append(m.wakes[:0], m.wakes[1:]...)
	}
	m.wakes = append(m.wakes, now)
	m.enter(Waking, now)
	m.wakeAt, m.cause, m.started = now, cause, false
	m.todo = ActStart
	m.out.Woke, m.out.Cause = true, cause
}

// StartDone tells the machine that start exited at now (err: non-zero, or
// could not run; a start killed at ready_timeout has already failed).
func (m *Machine) StartDone(err error, now time.Time) {
	if m.phase != Waking || m.started {
		return
	}
	if err != nil {
		m.fail(FailStart, now)
		return
	}
	m.started = true
}

// Ready tells the machine that the game server answered at now (a poll,
// or its feeder, after the wake began): once start has exited 0 the wake
// is done and the server is awake (idle, with no players yet).
func (m *Machine) Ready(now time.Time) bool {
	if m.phase != Waking || !m.started {
		return false
	}
	m.out.Ready, m.out.Took = true, now.Sub(m.wakeAt)
	m.awake(now)
	return true
}

// awake ends a rest at now: idle (the players' count comes next).
func (m *Machine) awake(now time.Time) {
	m.enter(Idle, now)
	m.idleSince, m.restSince = now, time.Time{}
	if m.people > 0 {
		m.enter(Awake, now)
	}
}

// fail ends the wake in progress at now for reason: stop runs to clean
// up, then the server is asleep again.
func (m *Machine) fail(reason string, now time.Time) {
	m.out.Failed = reason
	m.enter(Stopping, now)
	m.cleanup, m.pending = true, false
	m.todo = ActStop
}

// StopDone tells the machine that stop exited at now (err: non-zero,
// timed out, or could not run).
func (m *Machine) StopDone(err error, now time.Time) {
	if m.phase != Stopping {
		return
	}
	switch {
	case m.cleanup:
		m.cleanup = false
		m.enter(Asleep, now)
	case err == nil:
		m.stopFails = 0
		m.enter(Asleep, now)
		m.out.Slept = true
	default:
		m.stopFails++
		m.stopAfter = now.Add(stopBackoff(m.after, m.stopFails))
		m.out.StopFail, m.out.Retry = true, m.stopAfter
		m.pending = false
		m.restSince = time.Time{}
		m.enter(Idle, now)
		m.idleSince = now
		if m.people > 0 {
			m.enter(Awake, now)
		}
		return
	}
	if m.pending {
		m.pending = false
		if m.mayWake(now) {
			m.wake(m.pendCau, now)
		} else {
			m.out.Refused = true
		}
	}
}

// stopBackoff is the wait before stop is tried again after fails failures
// in a row: after, doubled for each failure past the first, at most
// maxStopBackoff.
func stopBackoff(after time.Duration, fails int) time.Duration {
	d := after
	for i := 1; i < fails && d < maxStopBackoff; i++ {
		d *= 2
	}
	return min(d, maxStopBackoff)
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
