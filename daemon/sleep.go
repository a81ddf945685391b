package daemon

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/queryd/queryd/internal/activity"
	"github.com/queryd/queryd/sleep"
	"github.com/queryd/queryd/state"
)

// [sleep] (package sleep): a server whose game server is stopped while
// it has no players. The server's rest (activity.Rest) is made before its
// feed and poller, which read it; its Sleeper after them and the relay,
// before the silence value (which reads the rest) and the UDP sockets
// (whose Forwarder it becomes in relay mode).

// sleepConfig is the server's [sleep] when it is on (nil otherwise).
func (s *Server) sleepConfig() *sleep.Config {
	c, _ := s.cfg.Section(sleep.Name).(*sleep.Config)
	if c == nil || !c.On() {
		return nil
	}
	return c
}

// newRest makes the server's rest when [sleep] is on (nil otherwise: a
// server that never rests).
func (s *Server) newRest() {
	if s.sleepConfig() != nil {
		s.rest = &activity.Rest{}
	}
}

// newSleep makes the server's Sleeper when [sleep] is on (nil otherwise).
// The game server is up once it answers the [upstream] poll after the
// wake began, or without [upstream] once its feeder has had activity.
func (s *Server) newSleep() (part, error) {
	c := s.sleepConfig()
	if c == nil {
		return nil, nil
	}
	ready := func(since time.Time) bool { return s.feed.LastFed().After(since) }
	var kick func()
	if s.upstream != nil {
		ready = func(since time.Time) bool { return s.upstream.LastAnswer().After(since) }
		kick = s.upstream.Kick
	}
	opts := sleep.Options{
		Settings: c.Settings(),
		Rest:     s.rest,
		Ready:    ready,
		Kick:     kick,
		Asleep:   s.setAsleep,
		Changed:  s.restChanged,
		Query:    s.host.claimed,
		Logger:   s.log.With("part", "sleep"),
		Registry: s.reg,
	}
	if s.relay != nil {
		opts.Relay = s.relay
	}
	sl, err := sleep.New(opts)
	if err != nil {
		return nil, err
	}
	s.sleep = sl
	return sleepPart{s: sl, store: s.store}, nil
}

// sleepPart runs the Sleeper, telling it the players who are not bots at
// every new state.
type sleepPart struct {
	s     *sleep.Sleeper
	store *state.Store
}

func (p sleepPart) Name() string { return p.s.Name() }

func (p sleepPart) Serve(ctx context.Context) error {
	unsub := p.store.Subscribe(func(snap *state.Snapshot) { p.s.Players(len(snap.Players) - snap.Bots()) })
	defer unsub()
	return p.s.Serve(ctx)
}

// restChanged is called when the server starts or ends a rest: its
// silence value changes without a new snapshot, so the XDP program is told
// at once to read it again (the sockets read it per batch).
func (s *Server) restChanged() {
	if s.fast != nil {
		s.fast.Changed(s.name)
	}
}

// wakeFunc carries out the feed's {"op":"wake"} (nil without [sleep]: the
// feed then says the server does not sleep).
func (s *Server) wakeFunc() func() error {
	if s.sleepConfig() == nil {
		return nil
	}
	return func() error {
		if s.sleep == nil {
			return errors.New("not started")
		}
		return s.sleep.Wake()
	}
}

// claimed reports whether p is a query of one of the host's protocol
// modules, on or off (their Claims): it never wakes a sleeping server.
func (d *Daemon) claimed(p []byte) bool {
	for _, m := range d.opts.Modules {
		if c, ok := m.(Claimer); ok && c.Claims(p) {
			return true
		}
	}
	return false
}

// setAsleep is the Sleeper's Asleep: the state without its players (true)
// or with them again, and the server's divert addresses resting (the XDP
// program reports game datagrams to them: divertJoined) or awake. A
// divert attached later takes the rest too (attachDivert).
func (s *Server) setAsleep(asleep bool) error {
	err := s.store.SetAsleep(asleep)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resting = asleep
	if s.divert != nil {
		if err := s.divert.Rest(asleep); err != nil {
			s.log.Error("sleep: the XDP program could not be told the server rests or runs: joins through divert are not seen", "asleep", asleep, "err", err)
		}
	}
	return err
}

// divertJoined is how divert mode wakes a sleeping server
// (xdp.Divert.OnJoin): the XDP program saw a game datagram (one no
// protocol claims) from src to game, one of the server's [listen] divert
// addresses, while it rested. The server wakes if a wake may begin
// (wakes_per_hour); nothing is held, the player's own retries reach the
// game server once it is up. It runs on the program's report reader, once
// per address every 10 ms at most: Sleeper.Join takes one lock briefly and
// never waits for the wake.
func (s *Server) divertJoined(game, src netip.AddrPort) {
	if s.sleep.Join(src) {
		s.log.Debug("sleep: a join through divert", "game", game, "src", src)
	}
}

// Sleep returns the server's sleep cycle (ok false without [sleep]).
func (s *Server) Sleep() (st sleep.Status, ok bool) {
	if s.sleep == nil {
		return sleep.Status{}, false
	}
	return s.sleep.Status(), true
}

var _ part = sleepPart{}
