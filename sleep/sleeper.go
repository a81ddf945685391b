package sleep

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/internal/activity"
	"github.com/queryd/queryd/internal/lograte"
)

// Settings are what a Sleeper runs with ([sleep], Config.Settings).
type Settings struct {
	After, ReadyTimeout, StopTimeout time.Duration
	Start, Stop                      []string
	WakesPerHour                     int
	Hold                             HoldLimits
}

// Forwarder passes a game datagram to the game server (relay mode's
// relay.Relay); it has responder.Forwarder's method.
type Forwarder interface {
	Forward(req []byte, src netip.AddrPort, local netip.Addr, back dgram.Sender) bool
}

// Options are what a Sleeper needs of the daemon.
type Options struct {
	Settings
	// Rest is the server's rest, shared with its feed and poller, which
	// the Sleeper sets as its phase changes (required).
	Rest *activity.Rest
	// Ready reports whether the game server has spoken since since (its
	// answer to the [upstream] poll, or its feeder's activity): a wake is
	// done once start exited 0 and Ready says yes (required).
	Ready func(since time.Time) bool
	// Kick asks the game server at once instead of at the next poll
	// (upstream.Poller.Kick); nil: nothing to kick.
	Kick func()
	// Asleep makes the server's state have no players (true) or its
	// sources' players again (false): state.Store.SetAsleep (required).
	Asleep func(bool) error
	// Changed is called after the server starts or ends a rest, so that
	// what reads the server's liveness value only when told (the XDP
	// program) reads it again; nil: nobody to tell.
	Changed func()
	// Relay passes the game datagrams on (relay mode); nil without relay
	// mode (then Forward is not used).
	Relay Forwarder
	// Query reports whether a datagram is a query of a protocol queryd
	// knows, on or off (the modules' Claims): while the server rests such a
	// datagram neither wakes it nor is held (a protocol that is off has
	// its queries relayed to the game server while it runs). nil: none.
	Query func(p []byte) bool
	// Run runs a command (nil: Run); Now is the clock (nil: time.Now).
	Run      func(ctx context.Context, argv []string, timeout time.Duration) Result
	Now      func() time.Time
	Logger   *slog.Logger
	Registry prometheus.Registerer
}

// Sleeper runs one server's sleep cycle (doc.go): it stops the game
// server once it has had no players for after, starts it again when a
// player arrives (a game datagram, Forward or Join) or the feed asks
// (Wake), holds the arriving players' datagrams while it wakes and passes
// them on once it answers. It is a daemon part (Serve); Forward, Join,
// Wake, Players and Status are safe from any goroutine.
type Sleeper struct {
	opts Options
	log  *slog.Logger
	m    metrics
	logs *lograte.Limiter // refused joins
	poke chan struct{}

	// pass: datagrams go straight to the relay (awake, idle or stopping,
	// nothing held): Forward reads it without the lock.
	pass atomic.Bool

	mu       sync.Mutex
	mach     *Machine
	hold     *hold
	draining bool // the held datagrams are being passed on
	st       status
}

// status is what the Sleeper reports besides the machine (mu).
type status struct {
	wakes     [2]uint64
	fails     map[string]uint64
	refused   uint64
	lastFail  Failure
	lastStart Result // the last start's end
	lastWake  time.Time
	lastTook  time.Duration
}

// StopFailed is a Failure's Reason for a stop that failed.
const StopFailed = "stop_failed"

// errText is err's text ("" for nil).
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Failure is a wake that failed, or a stop that did: why, when, and the
// command's output.
type Failure struct {
	Reason string    // FailStart, FailStartTimeout, FailNotReady, or StopFailed
	At     time.Time // zero: none yet
	Err    string    // the command's exit status or timeout
	Output string    // its output (at most MaxOutput bytes)
}

// New makes a Sleeper for a server whose game server is taken to run
// with no players from now, and registers its metrics.
func New(opts Options) (*Sleeper, error) {
	switch {
	case opts.Rest == nil || opts.Ready == nil || opts.Asleep == nil:
		return nil, errors.New("sleep: Rest, Ready and Asleep are required")
	case opts.After <= 0 || len(opts.Start) == 0 || len(opts.Stop) == 0:
		return nil, errors.New("sleep: after, start and stop are required")
	}
	if opts.Run == nil {
		opts.Run = Run
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
	}
	s := &Sleeper{
		opts: opts, log: opts.Logger, logs: lograte.New(1.0/60, 3), poke: make(chan struct{}, 1),
		mach: NewMachine(opts.Settings, opts.Now()), hold: newHold(opts.Hold),
		st: status{fails: map[string]uint64{}},
	}
	s.pass.Store(true)
	if err := s.m.register(opts.Registry, s); err != nil {
		return nil, fmt.Errorf("sleep metrics: %w", err)
	}
	return s, nil
}

// Name is the part's name in logs.
func (s *Sleeper) Name() string { return "sleep" }

// Forward is relay mode's forwarder in front of the relay: while the game
// server runs, a game datagram goes straight on (one atomic load); while
// it is asleep, the first that is no query (Options.Query) wakes it and is
// held with the ones after it,
// and while it wakes every one is held (bounded per source and in total,
// the oldest dropped first), to be passed on in order once it answers.
// A datagram when no wake may begin (the hour's wakes spent, or the
// clean-up after a failed wake) is dropped. It never blocks for long.
func (s *Sleeper) Forward(req []byte, src netip.AddrPort, local netip.Addr, back dgram.Sender) bool {
	if s.pass.Load() {
		return s.opts.Relay.Forward(req, src, local, back)
	}
	s.mu.Lock()
	if s.pass.Load() {
		s.mu.Unlock()
		return s.opts.Relay.Forward(req, src, local, back)
	}
	v := Pending
	if !s.draining {
		if s.opts.Query != nil && s.opts.Query(req) {
			s.mu.Unlock()
			s.m.dropped(dropQuery, 1)
			return false
		}
		v = s.mach.Join(CauseJoin, s.opts.Now())
		s.syncPass()
	}
	switch v {
	case Running:
		s.mu.Unlock()
		return s.opts.Relay.Forward(req, src, local, back)
	case Refused, Cleaning:
		s.refused(v)
		s.mu.Unlock()
		s.m.dropped(dropNoWake, 1)
		s.refusedLog(src)
		return false
	}
	dropped := s.hold.add(req, src, local, back)
	s.mu.Unlock()
	s.m.dropped(dropHeldOver, dropped)
	if v == Woken {
		s.wakeUp()
	}
	return true
}

// Join is a player arriving at a sleeping server where queryd sees no
// datagram to hold (divert mode: the XDP program saw a game datagram from
// src; its retries reach the game server once it is up): it wakes the
// server if it is asleep and a wake may begin. It reports whether the
// game server runs or is being woken.
func (s *Sleeper) Join(src netip.AddrPort) bool {
	s.mu.Lock()
	v := s.mach.Join(CauseJoin, s.opts.Now())
	s.syncPass()
	s.refused(v)
	s.mu.Unlock()
	switch v {
	case Refused, Cleaning:
		s.m.dropped(dropNoWake, 1)
		s.refusedLog(src)
		return false
	case Woken:
		s.wakeUp()
	}
	return true
}

// Wake is the feed's {"op":"wake"}: it wakes the server if it is asleep
// (nil also when it runs or is being woken), or says why not.
func (s *Sleeper) Wake() error {
	s.mu.Lock()
	v := s.mach.Join(CauseFeed, s.opts.Now())
	s.syncPass()
	s.refused(v)
	s.mu.Unlock()
	switch v {
	case Cleaning:
		return errors.New("the last wake failed and the game server is being stopped; ask again once it is asleep")
	case Refused:
		return fmt.Errorf("refused: %d wakes began in the last hour, the most [sleep] wakes_per_hour allows", s.opts.WakesPerHour)
	case Woken:
		s.wakeUp()
	}
	return nil
}

// Players tells the Sleeper how many players who are not bots the game
// server has (the state's, at every change).
func (s *Sleeper) Players(n int) {
	s.mu.Lock()
	s.mach.Players(n, s.opts.Now())
	s.syncPass()
	s.mu.Unlock()
	s.wakeUp()
}

// refused counts a wake refused for want of wakes this hour; s.mu is held.
func (s *Sleeper) refused(v Verdict) {
	if v == Refused {
		s.st.refused++
		s.m.refused.Inc()
	}
}

// wakeUp makes Serve look at the machine again.
func (s *Sleeper) wakeUp() {
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

// refusedLog warns of a join refused, at most 3 lines at once and then one
// a minute.
func (s *Sleeper) refusedLog(src netip.AddrPort) {
	if ok, suppressed := s.logs.Allow(); ok {
		s.log.Warn("a player's datagram did not wake the server: no wake may begin now (the hour's wakes are spent, "+
			"or a failed wake is being cleaned up)", "src", src, "wakes_per_hour", s.opts.WakesPerHour, "suppressed", suppressed)
	}
}

// readyEvery is how often a wake asks whether the game server answers.
const readyEvery = 100 * time.Millisecond

// kickEvery is how often a wake kicks the poller once start has exited.
const kickEvery = 250 * time.Millisecond

// Serve runs the cycle until ctx ends: one command at a time (a start
// killed at ready_timeout before the stop that cleans up after it). A
// command running when ctx ends is killed.
func (s *Sleeper) Serve(ctx context.Context) error {
	s.log.Info("sleep: the game server is stopped after it has had no players for after", "after", s.opts.After,
		"start", strings.Join(s.opts.Start, " "), "stop", strings.Join(s.opts.Stop, " "))
	l := loop{s: s, results: make(chan cmdResult, 1), born: s.opts.Now()}
	defer l.finish()
	for {
		wait := l.step(ctx)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-s.poke:
		case r := <-l.results:
			l.done(r)
		case <-timer.C:
		}
		timer.Stop()
	}
}

// loop is Serve's state: the command running and the one queued.
type loop struct {
	s       *Sleeper
	results chan cmdResult
	running Action             // ActNone: no command runs
	cancel  context.CancelFunc // the running command's
	queued  Action
	kicked  time.Time
	wasRest bool      // the phase last reported rested
	born    time.Time // when Serve began: the game server has until born + ready_timeout to answer once
	checked bool      // … and that was checked
}

type cmdResult struct {
	act Action
	res Result
}

// step moves the machine on and does what it asks; it returns how long
// Serve may wait for the next event.
func (l *loop) step(ctx context.Context) time.Duration {
	s := l.s
	s.mu.Lock()
	now := s.opts.Now()
	s.mach.Tick(now)
	if s.mach.Started() && s.opts.Ready(s.mach.WakeAt()) {
		s.mach.Ready(now)
	}
	unanswered := false
	if !l.checked && now.Sub(l.born) >= s.opts.ReadyTimeout {
		l.checked = true
		if unanswered = !s.opts.Ready(time.Time{}); unanswered {
			s.mach.Unanswered(now)
		}
	}
	act, out := s.mach.Take()
	phase, _ := s.mach.Phase()
	next, started, wakeAt := s.mach.Next(), s.mach.Started(), s.mach.WakeAt()
	rest := s.mach.RestSince()
	if out.Ready {
		s.draining = true // until deliver has passed the held datagrams on
	}
	s.syncPass()
	if out.Failed != "" {
		s.st.lastFail = Failure{Reason: out.Failed, At: now}
		if out.Failed != FailStartTimeout { // the start ran: its output says what it did
			s.st.lastFail.Err, s.st.lastFail.Output = errText(s.st.lastStart.Err), s.st.lastStart.Output
		}
	}
	s.mu.Unlock()

	if unanswered && phase == Stopping {
		s.log.Warn("sleep: the game server has not answered since queryd started: taken to be asleep; stop runs to make sure",
			"ready_timeout", s.opts.ReadyTimeout)
	}
	l.report(out, now)
	l.follow(phase, rest, now, out)
	if out.Failed != "" && l.running == ActStart {
		l.cancel() // killed at ready_timeout; its end is reported, then stop runs
	}
	if act != ActNone {
		l.queued = act
	}
	l.launch(ctx)
	if out.Ready {
		l.deliver()
	}
	wait := time.Hour
	if !next.IsZero() {
		wait = max(next.Sub(now), time.Millisecond)
	}
	if !l.checked {
		wait = min(wait, max(l.born.Add(s.opts.ReadyTimeout).Sub(now), time.Millisecond))
	}
	if phase == Waking {
		if started && s.opts.Kick != nil && now.Sub(l.kicked) >= kickEvery {
			s.opts.Kick()
			l.kicked = now
		}
		if started || now.Sub(wakeAt) < s.opts.ReadyTimeout {
			wait = min(wait, readyEvery)
		}
	}
	return wait
}

// syncPass opens the straight way for game datagrams while the game
// server runs (awake, idle, or being stopped after idle) and nothing held
// waits, and closes it otherwise; s.mu is held. Every change of the
// machine calls it before the lock is let go, so that Forward never passes
// a datagram on to a game server that is stopped.
func (s *Sleeper) syncPass() {
	p := s.mach.phase
	s.pass.Store(!s.draining && (p == Awake || p == Idle || p == Stopping && !s.mach.cleanup))
}

// follow makes the server's rest, state and hold follow the phase.
func (l *loop) follow(p Phase, restSince time.Time, now time.Time, out Outcome) {
	s := l.s
	switch {
	case p == Waking:
		s.opts.Rest.Waking()
	case p.Resting():
		s.opts.Rest.Down(restSince)
	default:
		if l.wasRest {
			s.opts.Rest.Woke(now)
		}
	}
	if out.Slept {
		// Asleep: no players, whatever the game server last said (a wake
		// that fails leaves the state asleep: it is woken only when ready).
		if err := s.opts.Asleep(true); err != nil {
			s.log.Error("sleep: the state could not be emptied of players", "err", err)
		}
	}
	if out.Failed != "" {
		s.mu.Lock()
		n := s.hold.clear()
		s.mu.Unlock()
		s.m.dropped(dropWakeFailed, n)
	}
	if p.Resting() != l.wasRest {
		l.wasRest = p.Resting()
		if s.opts.Changed != nil {
			s.opts.Changed()
		}
	}
}

// deliverRounds bounds the rounds of deliver: each passes on what was held
// when it began (at most hold_total datagrams); the last opens the
// straight way as it takes its batch, so that a flood that keeps the hold
// full cannot keep the server from running (and Serve from its loop).
const deliverRounds = 3

// deliver passes the held datagrams on to the game server, in the order
// they came, and those that come meanwhile after them; then the way is
// straight again. The state has its players back first. A player's
// datagrams keep their order unless they come faster than three rounds of
// passing on (a flood); then the last round's and the straight way's may
// cross.
func (l *loop) deliver() {
	s := l.s
	if err := s.opts.Asleep(false); err != nil {
		s.log.Error("sleep: the state's players could not be restored", "err", err)
	}
	total := 0
	for round := 1; ; round++ {
		s.mu.Lock()
		batch := s.hold.take()
		if len(batch) == 0 || round == deliverRounds {
			s.draining = false
			s.syncPass()
		}
		s.mu.Unlock()
		for _, d := range batch {
			if s.opts.Relay != nil {
				s.opts.Relay.Forward(d.B, d.Src, d.Local, d.Back)
			}
		}
		total += len(batch)
		if len(batch) == 0 || round == deliverRounds {
			break
		}
	}
	if total > 0 {
		s.log.Info("sleep: the held datagrams were passed to the game server", "datagrams", total)
	}
}

// launch runs the queued command if none runs.
func (l *loop) launch(ctx context.Context) {
	if l.running != ActNone || l.queued == ActNone {
		return
	}
	act := l.queued
	l.queued, l.running = ActNone, act
	argv, timeout := l.s.opts.Stop, l.s.opts.StopTimeout
	if act == ActStart {
		argv, timeout = l.s.opts.Start, l.s.opts.ReadyTimeout
	}
	cctx, cancel := context.WithCancel(ctx)
	l.cancel = cancel
	run := l.s.opts.Run
	go func() {
		l.results <- cmdResult{act: act, res: run(cctx, argv, timeout)}
	}()
}

// done takes a command's end to the machine.
func (l *loop) done(r cmdResult) {
	s := l.s
	l.running = ActNone
	l.cancel()
	s.logCommand(r)
	s.mu.Lock()
	now := s.opts.Now()
	if r.act == ActStart {
		s.st.lastStart = r.res
		if f := &s.st.lastFail; f.Reason == FailStartTimeout && f.Err == "" { // its output, now it is killed
			f.Err, f.Output = errText(r.res.Err), r.res.Output
		}
		s.mach.StartDone(r.res.Err, now)
	} else {
		s.mach.StopDone(r.res.Err, now)
		if r.res.Err != nil {
			s.st.lastFail = Failure{Reason: StopFailed, At: now, Err: r.res.Err.Error(), Output: r.res.Output}
		}
	}
	s.syncPass()
	s.mu.Unlock()
}

// finish kills the command running when Serve ends, and waits for it.
func (l *loop) finish() {
	if l.running != ActNone {
		l.cancel()
		<-l.results
	}
}

// logCommand logs how a command ended, with its output.
func (s *Sleeper) logCommand(r cmdResult) {
	what, argv := "stop", s.opts.Stop
	if r.act == ActStart {
		what, argv = "start", s.opts.Start
	}
	args := []any{"command", strings.Join(argv, " "), "took", r.res.Took.Round(time.Millisecond), "output", r.res.Output}
	if r.res.Dropped > 0 {
		args = append(args, "output_not_kept", r.res.Dropped)
	}
	if r.res.Err != nil {
		s.log.Error("sleep: "+what+" failed", append(args, "err", r.res.Err)...)
		return
	}
	s.log.Info("sleep: "+what+" ran", args...)
}

// report logs and counts what the machine did.
func (l *loop) report(o Outcome, now time.Time) {
	s := l.s
	if o.Refused {
		s.mu.Lock()
		s.st.refused++
		s.mu.Unlock()
		s.m.refused.Inc()
	}
	if o.Woke {
		s.mu.Lock()
		s.st.wakes[o.Cause]++
		s.st.lastWake = now
		s.mu.Unlock()
		s.m.wakes.WithLabelValues(o.Cause.String()).Inc()
		s.log.Info("sleep: waking the game server", "cause", o.Cause.String(), "ready_timeout", s.opts.ReadyTimeout)
	}
	if o.Ready {
		s.mu.Lock()
		s.st.lastTook = o.Took
		s.mu.Unlock()
		s.m.took.Observe(o.Took.Seconds())
		s.log.Info("sleep: the game server answers: awake", "took", o.Took.Round(time.Millisecond))
	}
	if o.Failed != "" {
		s.mu.Lock()
		s.st.fails[o.Failed]++
		s.mu.Unlock()
		s.m.fails.WithLabelValues(o.Failed).Inc()
		s.log.Error("sleep: the wake failed: stopping the game server again, answering as asleep",
			"reason", o.Failed, "ready_timeout", s.opts.ReadyTimeout)
	}
	if o.Slept {
		s.m.stops.WithLabelValues("ok").Inc()
		s.log.Info("sleep: the game server is stopped: asleep, answering its last state with no players", "after", s.opts.After)
	}
	if o.StopFail {
		s.m.stops.WithLabelValues("failed").Inc()
		s.log.Error("sleep: stop failed: the game server is taken to run; stop is tried again later", "retry_at", o.Retry)
	}
}
