package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"reflect"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/internal/activity"
	"github.com/queryd/queryd/internal/lograte"
	"github.com/queryd/queryd/module"
)

// Defaults for Config fields left zero (and of [upstream]).
const (
	DefaultInterval = 5 * time.Second // between polls
	DefaultTimeout  = 2 * time.Second // per request
)

// Config configures a Poller.
type Config struct {
	// Protocol is the module the game server is asked through ([upstream]
	// protocol): its polling capability.
	Protocol module.Poller
	Address  netip.AddrPort // the game server
	Interval time.Duration  // between polls; 0: DefaultInterval
	Timeout  time.Duration  // per request (A2S: each of INFO, PLAYER, RULES); 0: DefaultTimeout
	// StaleAfter is [feed] stale_after: Stale reports true while the game
	// server has not answered for this long, or not yet at all; 0: never.
	StaleAfter time.Duration
	// OwnGamePort leaves out the game port the game server reports (A2S
	// EDF), and the address and ports its protocol object carries
	// (module.PollOptions.OwnAddress): in relay mode queryd's own port is
	// the game port.
	OwnGamePort bool
	// Publish makes a mapped answer the state's upstream layer
	// (state.Store.SetGameServer); an error leaves the state as it was.
	Publish func(doc map[string]any) error
	// Rest is the server's rest ([sleep], package sleep): while its game
	// server is stopped on purpose the poller neither polls nor is stale,
	// and once it is awake again its quiet counts from the wake (nil:
	// never rests).
	Rest     *activity.Rest
	Logger   *slog.Logger
	Registry prometheus.Registerer
}

// Poller asks the game server queryd fronts for its state every Interval,
// through a module's polling capability (every poll from sockets of its
// own), and publishes each good answer. It is a daemon part: New checks
// the config and registers the metrics, Serve polls until its context
// ends. Stale and Status are safe to call from any goroutine.
type Poller struct {
	cfg  Config
	log  *slog.Logger
	logs *lograte.Limiter
	m    metrics
	ids  ids
	last map[string]any // the last document published (Serve's goroutine only)
	st   status         // for Status

	good    activity.Clock // the good answers
	stale   atomic.Bool    // what Stale last said, to log the changes once
	wasLive atomic.Bool    // Stale has said false once
	kick    chan struct{}  // Kick: poll now
}

// New makes a poller of cfg.Address with its metrics; nothing is asked
// until Serve.
func New(cfg Config) (*Poller, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	switch {
	case cfg.Publish == nil:
		return nil, errors.New("upstream: no publish function")
	case cfg.Protocol == nil:
		return nil, errors.New("upstream: no protocol")
	case !cfg.Address.IsValid() || cfg.Address.Port() == 0:
		return nil, fmt.Errorf("upstream: address %v: want IP:PORT", cfg.Address)
	}
	p := &Poller{cfg: cfg, log: cfg.Logger, logs: lograte.New(1.0/60, 3), kick: make(chan struct{}, 1)}
	p.stale.Store(true)
	if err := p.m.register(cfg.Registry, p); err != nil {
		return nil, fmt.Errorf("upstream metrics: %w", err)
	}
	return p, nil
}

// Name is the part's name in logs.
func (p *Poller) Name() string { return "upstream" }

// Serve polls at once, then every Interval and at each Kick, until ctx
// ends (nil). A poll in progress is cut short. While the game server is
// down on purpose (Config.Rest) nothing is polled.
func (p *Poller) Serve(ctx context.Context) error {
	if ctx.Err() != nil {
		return nil
	}
	p.log.Info("polling the game server", "protocol", p.cfg.Protocol.Name(), "upstream", p.cfg.Address, "interval", p.cfg.Interval)
	tick := time.NewTicker(p.cfg.Interval)
	defer tick.Stop()
	for {
		if !p.cfg.Rest.IsDown() {
			p.poll(ctx)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-p.kick:
		}
	}
}

// Kick makes the poller poll now (once the poll in progress, if any, is
// done) instead of at the next Interval: a wake ([sleep]) asks whether the
// game server answers yet. It never blocks; kicks while one is pending
// are one.
func (p *Poller) Kick() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// poll asks once and publishes a good answer; a failed poll keeps the state.
func (p *Poller) poll(ctx context.Context) {
	start := time.Now()
	ans, err := p.cfg.Protocol.Poll(ctx, p.cfg.Address, module.PollOptions{Timeout: p.cfg.Timeout, OwnAddress: p.cfg.OwnGamePort})
	if ctx.Err() != nil {
		return
	}
	rtt := time.Since(start)
	if err != nil {
		p.st.failed(err) // before the count, so that whoever sees the count sees the reason
		var bad module.BadAnswer
		if errors.As(err, &bad) || errors.Is(err, module.ErrOnlyChallenges) {
			p.count(OutcomeBadAnswer)
			p.warn("the game server's answer could not be read; the state stays as it was", err)
		} else {
			p.count(OutcomeSilent)
			p.warn("the game server did not answer", err)
		}
		p.Stale(time.Now())
		return
	}
	doc := ans.Doc
	if p.cfg.OwnGamePort {
		delete(doc, "game_port")
	}
	for _, f := range ans.Unanswered { // their last answers stand in
		if v, ok := p.last[f]; ok {
			doc[f] = v
		} else {
			delete(doc, f)
		}
	}
	if !ans.OwnIDs && !slices.Contains(ans.Unanswered, "players") {
		p.ids.rekey(doc)
	}
	if !reflect.DeepEqual(doc, p.last) {
		if err := p.cfg.Publish(doc); err != nil {
			p.st.failed(fmt.Errorf("the state refused the answer: %w", err))
			p.count(OutcomeRejected)
			p.warn("the state refused the game server's answer; the state stays as it was", err)
			p.Stale(time.Now())
			return
		}
		p.last = doc
	}
	now := time.Now()
	first := p.good.Last().IsZero()
	p.good.Note(now, p.cfg.StaleAfter)
	p.m.rtt.Observe(rtt.Seconds())
	p.st.answered(rtt, ans.Partial)
	if ans.Partial != nil || len(ans.Unanswered) > 0 {
		p.count(OutcomePartial)
		p.warn("part of the game server's answer did not come; its last answer stands", ans.Partial)
	} else {
		p.count(OutcomeAnswered)
	}
	if first {
		players, _ := doc["players"].(map[string]any)
		p.log.Info("the game server answered: serving its state", "upstream", p.cfg.Address, "rtt", rtt, "players", len(players))
	}
	p.Stale(now)
}

func (p *Poller) count(outcome string) { p.m.polls.WithLabelValues(outcome).Inc() }

// warn logs a failed or partial poll, at most 3 lines at once and then one
// a minute (a game server that is down fails every poll).
func (p *Poller) warn(msg string, err error) {
	ok, suppressed := p.logs.Allow()
	if !ok {
		return
	}
	args := []any{"upstream", p.cfg.Address, "err", err}
	if suppressed > 0 {
		args = append(args, "suppressed", suppressed)
	}
	p.log.Warn(msg, args...)
}

// LastAnswer returns when the game server last answered well (zero if never).
func (p *Poller) LastAnswer() time.Time { return p.good.Last() }

// AnsweringSince returns when the game server's current run of good
// answers began: its first, or its first after being stale (zero if
// never).
func (p *Poller) AnsweringSince() time.Time { return p.good.Since() }

// Stale reports whether the game server has not answered well for longer
// than StaleAfter, or not yet at all since queryd started (queryd does not
// serve a state it has not had from the game server). With StaleAfter 0 it
// is never stale, nor while the server rests (Config.Rest: its game
// server stopped on purpose), and once it is awake again the quiet counts
// from the wake. While it is, queryd answers nothing and its heartbeats
// flatline.
func (p *Poller) Stale(now time.Time) bool {
	if p.cfg.StaleAfter <= 0 || p.cfg.Rest.Resting() {
		return false
	}
	last := p.good.Last()
	stale := last.IsZero() || p.cfg.Rest.Quiet(last, now, p.cfg.StaleAfter)
	if stale != p.stale.Load() && p.stale.CompareAndSwap(!stale, stale) {
		switch {
		case stale:
			p.log.Warn("the game server has not answered for stale_after: answering no queries until it does", "upstream", p.cfg.Address, "stale_after", p.cfg.StaleAfter)
		case p.wasLive.Swap(true):
			p.log.Info("the game server answers again: serving its state", "upstream", p.cfg.Address)
		}
	}
	return stale
}
