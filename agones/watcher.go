package agones

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/internal/lograte"
)

// Options are what the daemon gives a Watcher besides [agones].
type Options struct {
	// Publish makes a mapped GameServer the state's Agones layer (a whole
	// document: absent fields fall back to what is under it, absent
	// "players" means none). An error leaves everything as it was: the
	// read counts as rejected and the last good document stands.
	Publish func(doc map[string]any) error
	// Changed, when set, is called after the document or the class
	// changed (Status has the new ones), from the watcher's goroutines,
	// outside its locks.
	Changed func()
	// StaleAfter is [feed] stale_after: Stale reports true once the SDK
	// server has given no GameServer that could be read for this long
	// (0: never for that reason).
	StaleAfter time.Duration
	Logger     *slog.Logger
	Registry   prometheus.Registerer
}

// Watcher reads one GameServer from the Agones SDK server beside the game
// (its REST API, plain HTTP): the watch stream GET /watch/gameserver,
// opened again with back-off whenever it ends, and GET /gameserver every
// [agones] interval. Each GameServer read is mapped to a state document
// (Publish) and a class (Status). It is a daemon part: New checks the
// config and registers the metrics, Serve reads until its context ends.
// Status, LastRead and Doc are safe to call from any goroutine and do not
// allocate.
type Watcher struct {
	sdk               string
	mapping           Mapping
	timeout, interval time.Duration
	staleAfter        time.Duration
	publish           func(map[string]any) error
	changed           func()
	log               *slog.Logger
	logs              *lograte.Limiter
	client            *http.Client
	watchURL, getURL  string
	m                 metrics

	mu  sync.Mutex // applying a GameServer
	ids playerIDs  // the List players' ids (mu)
	seq uint64     // watch lines applied (mu): a GET answer older than one is not applied

	view     atomic.Pointer[view] // the last GameServer applied; nil before the first
	lastRead atomic.Int64         // unix nanoseconds of the last good read; 0: none yet
	watching atomic.Bool          // the watch stream is open
	lastErr  atomic.Pointer[string]
	failing  atomic.Bool // the last read failed or was refused (to log the recovery once)
	// runSince is when the current run of answering reads began (unix
	// nanoseconds; 0: the GameServer was never read answering): the read
	// that made the class ClassAnswering, or the first read after a gap
	// longer than staleAfter.
	runSince atomic.Int64
	quiet    atomic.Bool // what Stale last found of the reads, to log the changes once
	wasQuiet atomic.Bool // the reads have been quiet once (to log their return)
}

// view is what the last GameServer applied stands for.
type view struct {
	state string
	class Class
	since time.Time // when class began: the read that changed it
	doc   map[string]any
}

// errLineTimeout ends a stream whose begun line did not end in time.
var errLineTimeout = errors.New("line not ended in time")

// New makes a watcher of the SDK server cfg names, with its metrics;
// nothing is read until Serve.
func New(cfg *Config, o Options) (*Watcher, error) {
	if o.Publish == nil {
		return nil, errors.New("agones: no publish function")
	}
	if err := checkSDK(cfg.SDK); err != nil {
		return nil, fmt.Errorf("agones: sdk: %w", err)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	w := &Watcher{
		sdk: cfg.SDK, mapping: cfg.Mapping(),
		timeout: time.Duration(cfg.Timeout), interval: time.Duration(cfg.Interval), staleAfter: o.StaleAfter,
		publish: o.Publish, changed: o.Changed,
		log: o.Logger, logs: lograte.New(1.0/60, 3),
		watchURL: "http://" + cfg.SDK + "/watch/gameserver", getURL: "http://" + cfg.SDK + "/gameserver",
	}
	if w.timeout <= 0 {
		w.timeout = DefaultTimeout
	}
	if w.interval <= 0 {
		w.interval = DefaultInterval
	}
	w.client = &http.Client{Transport: &http.Transport{
		Proxy:                  nil, // the SDK server is beside the game, never behind a proxy
		DialContext:            (&net.Dialer{Timeout: w.timeout, KeepAlive: 15 * time.Second}).DialContext,
		ResponseHeaderTimeout:  w.timeout,
		DisableCompression:     true,
		MaxResponseHeaderBytes: 64 << 10,
		MaxIdleConnsPerHost:    1,
		IdleConnTimeout:        time.Minute,
	}}
	if err := w.m.register(o.Registry, w); err != nil {
		return nil, fmt.Errorf("agones metrics: %w", err)
	}
	return w, nil
}

// Name is the part's name in logs.
func (w *Watcher) Name() string { return Name }

// Serve reads the SDK server until ctx ends (nil). It never fails for
// good: an SDK server that is down is asked again, with back-off.
func (w *Watcher) Serve(ctx context.Context) error {
	if ctx.Err() != nil {
		return nil
	}
	w.log.Info("reading the GameServer from the Agones SDK server", "sdk", w.sdk, "interval", w.interval)
	var wg sync.WaitGroup
	wg.Go(func() { w.pollLoop(ctx) })
	w.watchLoop(ctx)
	wg.Wait()
	w.client.CloseIdleConnections()
	return nil
}

// apply maps gs and publishes the document when it changed; a refused
// document changes nothing. seq is, for a GET answer, the watch lines
// applied when it was asked.
func (w *Watcher) apply(src string, gs *gameServer, seq uint64) bool {
	now := time.Now()
	w.mu.Lock()
	if src == SourceGet && seq != w.seq {
		w.mu.Unlock()
		w.read(src, OutcomeSame, now, false) // the SDK server answers: that is all it says
		return true
	}
	doc, ids := mapGameServer(gs, w.mapping, w.ids)
	st := gs.Status.State
	old := w.view.Load()
	docChanged := old == nil || !reflect.DeepEqual(doc, old.doc)
	if docChanged {
		if err := w.publish(doc); err != nil {
			w.mu.Unlock()
			w.refused(src, refuse(ReasonRejected, "the state refused the GameServer's document: %v", err))
			return false
		}
	}
	w.ids = ids
	if src == SourceWatch {
		w.seq++
	}
	changed := docChanged || old.state != st
	began := false // the class became ClassAnswering
	if changed {
		v := &view{state: st, class: ClassOf(st), since: now, doc: doc}
		if old != nil && old.class == v.class {
			v.since = old.since
		}
		began = v.class == ClassAnswering && (old == nil || old.class != ClassAnswering)
		w.view.Store(v)
	}
	w.mu.Unlock()
	outcome := OutcomeSame
	if changed {
		outcome = OutcomeApplied
	}
	w.read(src, outcome, now, began)
	if changed {
		w.logClass(old, st)
		if w.changed != nil {
			w.changed()
		}
	}
	return true
}

// logClass logs the GameServer's first state and each change of class.
func (w *Watcher) logClass(old *view, st string) {
	c := ClassOf(st)
	if old != nil && old.class == c {
		return
	}
	switch c {
	case ClassAnswering:
		w.log.Info("the GameServer takes players: serving its state", "sdk", w.sdk, "state", st)
	case ClassStarting:
		w.log.Info("the GameServer is not ready yet: answering nothing of it", "sdk", w.sdk, "state", st)
	default:
		w.log.Warn("the GameServer is going or in a state queryd does not know: answering nothing", "sdk", w.sdk, "state", st)
	}
}

// read records a good read; began: it made the class ClassAnswering.
func (w *Watcher) read(src, outcome string, now time.Time, began bool) {
	n := now.UnixNano()
	prev := w.lastRead.Swap(n)
	if v := w.view.Load(); v != nil && v.class == ClassAnswering {
		gap := prev == 0 || w.staleAfter > 0 && n-prev > int64(w.staleAfter)
		if began || gap || w.runSince.Load() == 0 {
			w.runSince.Store(n)
		}
	}
	w.m.reads.WithLabelValues(src, outcome).Inc()
	if w.failing.Swap(false) {
		w.lastErr.Store(nil)
		w.log.Info("the Agones SDK server answers again", "sdk", w.sdk, "source", src)
	}
}

// failed records a read that got no answer.
func (w *Watcher) failed(src string, err error) {
	w.m.reads.WithLabelValues(src, ReasonFailed).Inc()
	w.bad(src, err)
}

// refused records a read whose answer was not applied.
func (w *Watcher) refused(src string, err error) {
	reason := ReasonShape
	var r *refusal
	if errors.As(err, &r) {
		reason = r.reason
	}
	w.m.reads.WithLabelValues(src, reason).Inc()
	w.bad(src, err)
}

// bad keeps err for Status and logs it, at most 3 lines at once and then
// one a minute (an SDK server that is down fails every read).
func (w *Watcher) bad(src string, err error) {
	msg := err.Error()
	w.lastErr.Store(&msg)
	w.failing.Store(true)
	ok, suppressed := w.logs.Allow()
	if !ok {
		return
	}
	args := []any{"sdk", w.sdk, "source", src, "err", err}
	if suppressed > 0 {
		args = append(args, "suppressed", suppressed)
	}
	w.log.Warn("the Agones SDK server could not be read; the last GameServer read stands", args...)
}
