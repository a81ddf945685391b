package agones

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	Changed  func()
	Logger   *slog.Logger
	Registry prometheus.Registerer
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
}

// view is what the last GameServer applied stands for.
type view struct {
	state string
	class Class
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
		timeout: time.Duration(cfg.Timeout), interval: time.Duration(cfg.Interval),
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

// watchLoop keeps the watch stream open: opened again after it ends,
// after a back-off that starts over once a stream has stayed open for
// maxBackoff (a stream that ends at once, every time, is asked ever less
// often).
func (w *Watcher) watchLoop(ctx context.Context) {
	var bo backoff
	for {
		opened := time.Now()
		w.watchOnce(ctx)
		if time.Since(opened) >= maxBackoff {
			bo.reset()
		}
		if !sleep(ctx, bo.next()) {
			return
		}
		w.m.reconnects.Inc()
	}
}

// watchOnce reads one watch stream until it ends.
func (w *Watcher) watchOnce(parent context.Context) {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	resp, err := w.get(ctx, w.watchURL)
	if err != nil {
		if parent.Err() == nil {
			w.failed(SourceWatch, fmt.Errorf("opening the watch stream: %w", err))
		}
		return
	}
	defer resp.Body.Close()
	w.watching.Store(true)
	defer w.watching.Store(false)
	timer := time.AfterFunc(time.Hour, func() { cancel(errLineTimeout) })
	timer.Stop()
	defer timer.Stop()
	lr := newLineReader(resp.Body, MaxLine, func(waiting bool) {
		if waiting {
			timer.Reset(w.timeout)
		} else {
			timer.Stop()
		}
	})
	for {
		line, err := lr.next()
		switch {
		case errors.Is(err, errTooLong):
			w.refused(SourceWatch, refuse(ReasonTooLong, "a line longer than %d bytes: skipped", MaxLine))
			continue
		case err != nil:
			w.ended(parent, ctx, err)
			return
		}
		if gs, err := parseWatchLine(line); err != nil {
			w.refused(SourceWatch, err)
		} else {
			w.apply(SourceWatch, gs, 0)
		}
	}
}

// ended records why a watch stream ended (nothing when queryd stops).
func (w *Watcher) ended(parent, ctx context.Context, err error) {
	switch {
	case parent.Err() != nil:
	case errors.Is(context.Cause(ctx), errLineTimeout):
		w.refused(SourceWatch, refuse(ReasonTimeout, "a line not ended within %s: opening the stream again", w.timeout))
	default:
		if err == io.EOF {
			err = errors.New("the SDK server ended it")
		}
		w.failed(SourceWatch, fmt.Errorf("the watch stream ended: %w", err))
	}
}

// pollLoop asks GET /gameserver every interval.
func (w *Watcher) pollLoop(ctx context.Context) {
	tick := time.NewTicker(w.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			w.poll(ctx)
		}
	}
}

// poll asks GET /gameserver once and applies the answer, unless a watch
// line came while it was on its way (the answer may be the older).
func (w *Watcher) poll(parent context.Context) {
	w.mu.Lock()
	seq := w.seq
	w.mu.Unlock()
	ctx, cancel := context.WithTimeout(parent, w.timeout)
	defer cancel()
	gs, err := w.getGameServer(ctx)
	switch {
	case parent.Err() != nil:
	case err != nil:
		var r *refusal
		if errors.As(err, &r) {
			w.refused(SourceGet, r)
		} else {
			w.failed(SourceGet, fmt.Errorf("GET /gameserver: %w", err))
		}
	default:
		w.apply(SourceGet, gs, seq)
	}
}

// getGameServer reads GET /gameserver's answer, at most MaxLine bytes of it.
func (w *Watcher) getGameServer(ctx context.Context) (*gameServer, error) {
	resp, err := w.get(ctx, w.getURL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxLine+1))
	if err != nil {
		return nil, err
	}
	if len(body) > MaxLine {
		return nil, refuse(ReasonTooLong, "an answer longer than %d bytes", MaxLine)
	}
	return parseGameServer(body)
}

// get sends a GET and returns a 200 answer; any other status is an error
// carrying the start of its body.
func (w *Watcher) get(ctx context.Context, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		resp.Body.Close()
		return nil, fmt.Errorf("HTTP %s: %q", resp.Status, b)
	}
	return resp, nil
}

// apply maps gs and publishes the document when it changed; a refused
// document changes nothing. seq is, for a GET answer, the watch lines
// applied when it was asked.
func (w *Watcher) apply(src string, gs *gameServer, seq uint64) bool {
	now := time.Now()
	w.mu.Lock()
	if src == SourceGet && seq != w.seq {
		w.mu.Unlock()
		w.read(src, OutcomeSame, now) // the SDK server answers: that is all it says
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
	if changed {
		w.view.Store(&view{state: st, class: ClassOf(st), doc: doc})
	}
	w.mu.Unlock()
	outcome := OutcomeSame
	if changed {
		outcome = OutcomeApplied
	}
	w.read(src, outcome, now)
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

// read records a good read.
func (w *Watcher) read(src, outcome string, now time.Time) {
	w.lastRead.Store(now.UnixNano())
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

// sleep waits d or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
