package status

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/queryd/queryd/responder"
)

// Interval is how often the sampler reads the counters, and the page the JSON.
const Interval = time.Second

// Sampler reads the daemon's counters once a second into fixed-size rings
// and serves the status page from them (Handler). It is a daemon part:
// Serve runs it.
type Sampler struct {
	src Source
	log *slog.Logger

	mu       sync.Mutex
	times    ring // the samples' times, unix seconds
	prev     *counters
	prevAt   time.Time
	traffic  map[string]*protoSeries
	order    []string // traffic's protocols in first-seen order
	unproven ring
	relay    relaySeries
	beats    beatTimes
	busiest  minute
	drained  []responder.SourceCount // reused for every drain
	warned   time.Time               // the last warning about the metrics

	// encoded is /status.json as of the last sample: encoded on the first
	// request after a sample (at most once a sample, and not at all for
	// the servers of a host nobody looks at), served as it is to every
	// request until the next; nil until then.
	encoded   atomic.Pointer[[]byte]
	encMu     sync.Mutex // held while encoding; guards sampledAt
	sampledAt time.Time
	// read is when /status.json was last asked for (unix ns; 0: never).
	read atomic.Int64
}

// protoSeries are one protocol's per-second rates and totals.
type protoSeries struct {
	rates  map[string]*ring // Outcomes and byteSeries
	totals map[string]float64
}

// relaySeries are the relay's per-second rates, its sessions and totals.
type relaySeries struct {
	on       bool
	sessions ring
	rates    map[string]*ring // RelaySeries
	totals   map[string]float64
}

// beatTimes are when the heartbeat counters last grew, to within a sample.
type beatTimes struct {
	on                    bool
	heartbeat, getinfo    time.Time
	sent, flat, err, asks float64
}

// New makes a sampler over src.
func New(src Source, log *slog.Logger) *Sampler {
	if log == nil {
		log = slog.Default()
	}
	s := &Sampler{src: src, log: log, traffic: map[string]*protoSeries{}}
	s.relay.rates = newRings(RelaySeries)
	return s
}

// Name is the part's name in logs.
func (s *Sampler) Name() string { return "status" }

// Serve samples at once and then every Interval until ctx is done.
func (s *Sampler) Serve(ctx context.Context) error {
	if ctx.Err() != nil {
		return nil // never started
	}
	t := time.NewTicker(Interval)
	defer t.Stop()
	s.Sample(time.Now())
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			s.Sample(now)
		}
	}
}

// Sample takes one sample at now: the counters' rates since the last one,
// the unproven budget's use, the heartbeats' times and the second's
// busiest sources; the first request after it encodes /status.json as of
// now, which every request until the next sample is served. Serve (or
// the daemon's one tick over a host's servers) calls it; calls must not
// overlap.
func (s *Sampler) Sample(now time.Time) {
	s.sample(now)
	s.encMu.Lock()
	s.sampledAt = now
	s.encoded.Store(nil)
	s.encMu.Unlock()
}

// encode makes /status.json as of now the bytes served.
func (s *Sampler) encode(now time.Time) []byte {
	b, err := json.Marshal(s.Report(now))
	if err != nil { // a Report always encodes; a bug otherwise
		s.log.Error("status page: encoding /status.json", "err", err)
		return nil
	}
	b = append(b, '\n')
	s.encoded.Store(&b)
	return b
}

// JSON returns /status.json as of the last sample (as of now when there
// was none yet).
func (s *Sampler) JSON() []byte {
	s.read.Store(time.Now().UnixNano())
	if b := s.encoded.Load(); b != nil {
		return *b
	}
	s.encMu.Lock()
	defer s.encMu.Unlock()
	if b := s.encoded.Load(); b != nil {
		return *b
	}
	at := s.sampledAt
	if at.IsZero() {
		at = time.Now()
	}
	return s.encode(at)
}

func (s *Sampler) sample(now time.Time) {
	c, err := readCounters(s.src.Gatherer, s.src.Heartbeats)
	if err != nil && now.Sub(s.warned) >= time.Minute {
		s.warned = now
		s.log.Warn("status page: reading the metrics (the page shows what could be read)", "err", err)
	}
	drained := s.drainSources()
	s.mu.Lock()
	defer s.mu.Unlock()
	dt := now.Sub(s.prevAt).Seconds()
	if s.prev == nil || dt <= 0 {
		dt = 0 // the first sample: totals only
	}
	s.times.push(float64(now.Unix()))
	s.sampleTraffic(c, dt)
	if s.src.UnprovenUse != nil {
		s.unproven.push(s.src.UnprovenUse(now))
	}
	s.sampleRelay(c, dt)
	s.sampleBeats(c, now)
	s.busiest.add(drained)
	s.prev, s.prevAt = c, now
}

// drainSources hands over the busiest sources of the socket path's
// receive loops and of the XDP fast path since the last sample, in one
// reused buffer (busiest.merge sums a source both counted).
func (s *Sampler) drainSources() []responder.SourceCount {
	d := s.drained[:0]
	if s.src.DrainSources != nil {
		d = s.src.DrainSources(d)
	}
	if s.src.FastSources != nil {
		d = s.src.FastSources(d)
	}
	s.drained = d
	return d
}

// Viewed reports whether /status.json was asked for within d before now
// (a daemon of many servers samples the others less often).
func (s *Sampler) Viewed(now time.Time, d time.Duration) bool {
	r := s.read.Load()
	return r != 0 && now.Sub(time.Unix(0, r)) < d
}

// rate is the per-second growth of a counter from prev to cur over dt
// seconds (0 without an earlier sample).
func rate(cur, prev, dt float64) float64 {
	if dt <= 0 || cur < prev {
		return 0
	}
	return (cur - prev) / dt
}

func (s *Sampler) sampleTraffic(c *counters, dt float64) {
	for _, p := range c.order {
		ps, ok := s.traffic[p]
		if !ok {
			ps = &protoSeries{rates: newRings(append(append([]string{}, Outcomes...), byteSeries...))}
			for _, r := range ps.rates {
				r.fill(s.times.n - 1)
			}
			s.traffic[p] = ps
			s.order = append(s.order, p)
		}
		var prev map[string]float64
		if s.prev != nil {
			prev = s.prev.traffic[p]
		}
		for name, r := range ps.rates {
			r.push(rate(c.traffic[p][name], prev[name], dt))
		}
		ps.totals = c.traffic[p]
	}
}

func (s *Sampler) sampleRelay(c *counters, dt float64) {
	if !c.relayOn {
		return
	}
	s.relay.on = true
	s.relay.sessions.push(c.sessions)
	for name, r := range s.relay.rates {
		prev := 0.0
		if s.prev != nil {
			prev = s.prev.relay[name]
		}
		r.push(rate(c.relay[name], prev, dt))
	}
	s.relay.totals = c.relay
}

func (s *Sampler) sampleBeats(c *counters, now time.Time) {
	if !c.heartbeatsOn {
		return
	}
	b := &s.beats
	b.on = true
	if c.heartbeats > b.sent {
		b.heartbeat = now
	}
	if c.getinfo > b.asks {
		b.getinfo = now
	}
	b.sent, b.flat, b.err, b.asks = c.heartbeats, c.flatlines, c.hbErr, c.getinfo
}

// newRings makes one ring per name.
func newRings(names []string) map[string]*ring {
	m := make(map[string]*ring, len(names))
	for _, n := range names {
		m[n] = &ring{}
	}
	return m
}
