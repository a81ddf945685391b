package status

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/state"
)

// SchemaVersion is the version of the /status.json document
// (docs/status.md); it changes when a field changes meaning or goes away.
const SchemaVersion = 1

// Report is the /status.json document (docs/status.md).
type Report struct {
	Schema     int            `json:"schema"`
	Now        time.Time      `json:"now"`
	Servers    int            `json:"servers"` // the host's servers: with more than one, GET / lists them
	State      StateCard      `json:"state"`
	Silent     SilentCard     `json:"silent"`
	Server     ServerCard     `json:"server"`
	Feed       FeedCard       `json:"feed"`
	Upstream   *UpstreamCard  `json:"upstream"` // null without [upstream]
	Agones     *AgonesCard    `json:"agones"`   // null without [agones]
	Sleep      *SleepCard     `json:"sleep"`    // null without [sleep]
	Traffic    TrafficCard    `json:"traffic"`
	Relay      *RelayCard     `json:"relay"`      // null when relay mode is off
	Heartbeats *HeartbeatCard `json:"heartbeats"` // null without a module's master heartbeats ([[quake3.masters]])
	Busiest    BusiestCard    `json:"busiest"`
}

// StateCard is what the server answers (feed/doc.go's liveness contract):
// "answering" the game's current state, "not_fed" ([server]: no feeder or
// game server has sent state yet), "asleep" ([sleep]: the game server
// stopped on purpose; its last state with no players; SleepCard says
// more), "silent" (nothing; SilentCard says why)
// or, for a server of the host that does not run, "down", since when, and
// whether a source has sent the game's state.
type StateCard struct {
	State string     `json:"state"`
	Since *time.Time `json:"since"`
	Fed   bool       `json:"fed"`
	// Error is, for a server of the host that does not run ("down"), why.
	Error string `json:"error,omitempty"`
}

// SilentCard says whether queryd answers: while it is silent no protocol
// answers anything (the page's banner).
type SilentCard struct {
	Silent bool `json:"silent"`
	// Reason is the cause that began first ("feed", "upstream",
	// "upstream_unanswered", "agones_starting", "agones_stopped",
	// "agones"); null while queryd answers.
	Reason *string `json:"reason"`
	// Reasons are every cause that holds, the first first; empty while
	// queryd answers.
	Reasons []string `json:"reasons"`
	// Since is when queryd fell silent; null while it answers.
	Since *time.Time `json:"since"`
	// Deadline is, while queryd answers, when it falls silent unless the
	// feed speaks or the game server answers first; null while silent or
	// when nothing can silence it.
	Deadline *time.Time `json:"deadline"`
}

// UpstreamCard is the [upstream] game server queryd takes its state from.
type UpstreamCard struct {
	Protocol   string     `json:"protocol"`
	Address    string     `json:"address"`
	LastAnswer *time.Time `json:"last_answer"`  // null before the first
	AnswerAge  *float64   `json:"answer_age_s"` // null before the first
	RoundTrip  *float64   `json:"round_trip_ms"`
	LastError  string     `json:"last_error"` // why the last poll failed; "" when it was answered
	Partial    string     `json:"partial"`    // what part of the last answer did not come; "" when whole
	Stale      bool       `json:"stale"`      // the game server is a cause of silence (stale or not yet answered)
	StaleAfter float64    `json:"stale_after_s"`
}

// AgonesCard is the Agones GameServer queryd takes its state from
// ([agones]), as the SDK server beside it last gave it.
type AgonesCard struct {
	SDK        string     `json:"sdk"`         // the SDK server's address, HOST:PORT
	State      string     `json:"state"`       // the GameServer's state ("Ready"); "" before the first read
	Class      string     `json:"class"`       // what it means: unread, starting, answering, silent
	ClassSince *time.Time `json:"class_since"` // when that class began; null before the first read
	Watching   bool       `json:"watching"`    // the watch stream is open
	LastRead   *time.Time `json:"last_read"`   // the last GameServer read; null before the first
	ReadAge    *float64   `json:"read_age_s"`  // its age, to a tenth; null before the first
	LastError  string     `json:"last_error"`  // why the last read failed or was refused; "" when it was good
	Stale      bool       `json:"stale"`       // the GameServer is a cause of silence
	StaleAfter float64    `json:"stale_after_s"`
}

// SleepCard is the [sleep] cycle: the game server stopped while it has no
// players, and woken when one comes.
type SleepCard struct {
	Phase       string     `json:"phase"`        // awake, idle, stopping, asleep, waking
	PhaseSince  *time.Time `json:"phase_since"`  // when that phase began
	AsleepSince *time.Time `json:"asleep_since"` // when the rest began (the stop); null while the game server runs
	After       float64    `json:"after_s"`      // [sleep] after
	IdleUntil   *time.Time `json:"idle_until"`   // idle: when stop runs unless a player comes; else null
	// Wakes are the wakes begun since queryd started by cause (join,
	// feed), Failures the failed ones by reason (start_failed,
	// start_timeout, not_ready), Refused those not begun (wakes_per_hour
	// spent).
	Wakes         map[string]uint64 `json:"wakes"`
	Failures      map[string]uint64 `json:"failures"`
	Refused       uint64            `json:"refused"`
	WakesPerHour  int               `json:"wakes_per_hour"`
	WakesLastHour int               `json:"wakes_last_hour"`
	LastWake      *time.Time        `json:"last_wake"`        // null: none yet
	LastWakeTook  *float64          `json:"last_wake_took_s"` // the last good wake's time; null: none yet
	// LastFailure is the last wake or stop that failed; null: none.
	LastFailure *SleepFailure `json:"last_failure"`
	Held        int           `json:"held"`       // game datagrams held now for the wake
	HeldBytes   int           `json:"held_bytes"` // their bytes
}

// SleepFailure is a wake or stop that failed.
type SleepFailure struct {
	Reason string    `json:"reason"` // start_failed, start_timeout, not_ready, stop_failed
	At     time.Time `json:"at"`
	Error  string    `json:"error"`  // the command's exit status or timeout ("" for not_ready)
	Output string    `json:"output"` // its output, at most 4 KiB
}

// ServerCard is what the server is and who plays on it.
type ServerCard struct {
	Name       string   `json:"name"`
	Map        string   `json:"map"`
	Game       string   `json:"game"`
	Version    string   `json:"version"` // the state's "version"
	Players    int      `json:"players"`
	MaxPlayers int      `json:"max_players"`
	Bots       int      `json:"bots"`
	PlayerList []Player `json:"player_list"`
	Protocols  []string `json:"protocols"` // the live protocols, in demux order
	Listen     []string `json:"listen"`    // [listen] udp: every protocol answers on each
	Build      Build    `json:"build"`
}

// Player is one row of the player list.
type Player struct {
	ID    uint32  `json:"id"`
	Name  string  `json:"name"`
	Score int32   `json:"score"`
	Ping  int32   `json:"ping"` // ms; -1 when unknown (state.PingUnknown; the page shows "?")
	Time  float64 `json:"time"` // seconds connected
	Bot   bool    `json:"bot"`
}

// FeedCard is the feed's health.
type FeedCard struct {
	Connections    int        `json:"connections"`
	LastMessage    *time.Time `json:"last_message"`       // null before the first
	LastMessageAge *float64   `json:"last_message_age_s"` // null before the first
	StateVersion   uint64     `json:"state_version"`
	Stale          bool       `json:"stale"`
	StaleAfter     float64    `json:"stale_after_s"` // 0: never stale
	SilentSince    *time.Time `json:"silent_since"`  // when it went stale; null while live
}

// TrafficCard is the per-second traffic of every protocol row of
// queryd_requests_total, one value per sample of Times.
type TrafficCard struct {
	Interval    float64        `json:"interval_s"`
	Times       []int64        `json:"times"` // the samples, unix seconds, oldest first
	Protocols   []ProtoTraffic `json:"protocols"`
	UnprovenUse []float64      `json:"unproven_use"` // 0 to 1, per sample
	Outcomes    []string       `json:"outcomes"`     // the names of per_s's outcome series, in order
}

// ProtoTraffic is one protocol's traffic ("unknown": datagrams no protocol
// claimed).
type ProtoTraffic struct {
	Name   string               `json:"name"`
	PerS   map[string][]float64 `json:"per_s"`  // Outcomes, bytes_in, bytes_out: per second
	Totals map[string]float64   `json:"totals"` // the same, counted since start
}

// RelayCard is relay mode's sessions and traffic.
type RelayCard struct {
	Sessions []float64            `json:"sessions"` // open, per sample
	PerS     map[string][]float64 `json:"per_s"`    // opened, evicted, upstream, downstream
	Totals   map[string]float64   `json:"totals"`
}

// HeartbeatCard is the Quake 3 master heartbeats' state.
type HeartbeatCard struct {
	Heartbeats    float64    `json:"heartbeats"`     // sent since start
	Flatlines     float64    `json:"flatlines"`      // sent since start
	Errors        float64    `json:"errors"`         // not sent since start
	MasterGetinfo float64    `json:"master_getinfo"` // masters' getinfo answered since start
	LastHeartbeat *time.Time `json:"last_heartbeat"` // to within a second; null: none seen
	LastGetinfo   *time.Time `json:"last_getinfo"`   // to within a second; null: none seen
}

// BusiestCard is the sources with the most requests in the last Window seconds.
type BusiestCard struct {
	Window  int            `json:"window_s"`
	Sources []SourceReport `json:"sources"`
}

// SourceReport is one busy source.
type SourceReport struct {
	Source   string            `json:"source"` // an IPv4 address or an IPv6 /64
	Requests uint64            `json:"requests"`
	Outcomes map[string]uint64 `json:"outcomes"` // responder.SourceOutcomes; zeros left out
}

// Report builds the document at now.
func (s *Sampler) Report(now time.Time) Report {
	r := Report{Schema: SchemaVersion, Now: now.UTC(), Servers: 1}
	if s.src.Servers != nil {
		r.Servers = s.src.Servers()
	}
	var sl Silence
	if s.src.Silence != nil {
		sl = s.src.Silence(now)
	}
	r.State = StateCard{State: cmp.Or(sl.State, "answering"), Since: timeOrNil(sl.Since), Fed: sl.Fed}
	r.Silent = silentCard(sl)
	r.Server = s.serverCard(now)
	r.Feed = s.feedCard(now, sl)
	r.Upstream = s.upstreamCard(now, sl)
	r.Agones = s.agonesCard(now, sl)
	r.Sleep = s.sleepCard()
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Traffic = s.trafficCard(r.Server.Protocols)
	r.Relay = s.relayCard()
	r.Heartbeats = s.heartbeatCard()
	r.Busiest = s.busiestCard()
	return r
}

func (s *Sampler) serverCard(now time.Time) ServerCard {
	c := ServerCard{Build: s.src.Build, PlayerList: []Player{}, Protocols: []string{}, Listen: []string{}}
	if s.src.Protocols != nil {
		c.Protocols = append(c.Protocols, s.src.Protocols()...)
	}
	if s.src.Listen != nil {
		for _, ap := range s.src.Listen() {
			c.Listen = append(c.Listen, ap.String())
		}
	}
	if s.src.Snapshot == nil {
		return c
	}
	snap := s.src.Snapshot()
	c.Name, c.Map, c.Game, c.Version = snap.Name, snap.Map, snap.Game, snap.GameVersion
	c.Players, c.MaxPlayers, c.Bots = len(snap.Players), snap.MaxPlayers, snap.Bots()
	for _, p := range snap.Players {
		c.PlayerList = append(c.PlayerList, player(p, now))
	}
	return c
}

func player(p state.Player, now time.Time) Player {
	t := 0.0
	if !p.Since.IsZero() {
		t = math.Round(max(now.Sub(p.Since).Seconds(), 0))
	}
	return Player{ID: p.ID, Name: p.Name, Score: p.Score, Ping: p.Ping, Time: t, Bot: p.Bot}
}

func silentCard(sl Silence) SilentCard {
	c := SilentCard{Silent: sl.Silent, Reasons: []string{}, Deadline: timeOrNil(sl.Deadline)}
	if sl.Silent {
		c.Since = timeOrNil(sl.Since)
	}
	if sl.Silent && len(sl.Reasons) > 0 {
		r := sl.Reasons[0]
		c.Reason = &r
		c.Reasons = append(c.Reasons, sl.Reasons...)
	}
	return c
}

func (s *Sampler) upstreamCard(now time.Time, sl Silence) *UpstreamCard {
	if s.src.Upstream == nil {
		return nil
	}
	st := s.src.Upstream()
	c := &UpstreamCard{Protocol: st.Protocol, Address: st.Address, LastError: st.LastError, Partial: st.Partial,
		Stale: sl.Upstream, StaleAfter: s.src.StaleAfter.Seconds()}
	if !st.LastAnswer.IsZero() {
		c.LastAnswer = timeOrNil(st.LastAnswer)
		age := math.Round(max(now.Sub(st.LastAnswer).Seconds(), 0)*10) / 10
		rtt := math.Round(st.RTT.Seconds()*1e4) / 10 // ms, to a tenth
		c.AnswerAge, c.RoundTrip = &age, &rtt
	}
	return c
}

func (s *Sampler) agonesCard(now time.Time, sl Silence) *AgonesCard {
	if s.src.Agones == nil {
		return nil
	}
	st := s.src.Agones()
	c := &AgonesCard{SDK: st.SDK, State: st.State, Class: st.Class.String(), ClassSince: timeOrNil(st.ClassSince),
		Watching: st.Watching, LastError: st.LastError, Stale: sl.Agones, StaleAfter: s.src.StaleAfter.Seconds()}
	if !st.LastRead.IsZero() {
		c.LastRead = timeOrNil(st.LastRead)
		age := math.Round(max(now.Sub(st.LastRead).Seconds(), 0)*10) / 10
		c.ReadAge = &age
	}
	return c
}

func (s *Sampler) sleepCard() *SleepCard {
	if s.src.Sleep == nil {
		return nil
	}
	st := s.src.Sleep()
	c := &SleepCard{Phase: st.Phase.String(), PhaseSince: timeOrNil(st.PhaseSince), AsleepSince: timeOrNil(st.AsleepSince),
		After: st.After.Seconds(), IdleUntil: timeOrNil(st.IdleUntil), Wakes: st.Wakes, Failures: st.Failures,
		Refused: st.Refused, WakesPerHour: st.WakesPerHour, WakesLastHour: st.WakesLastHour, LastWake: timeOrNil(st.LastWake),
		Held: st.Held, HeldBytes: st.HeldBytes}
	if st.LastWakeTook > 0 {
		took := math.Round(st.LastWakeTook.Seconds()*100) / 100
		c.LastWakeTook = &took
	}
	if f := st.LastFailure; !f.At.IsZero() {
		c.LastFailure = &SleepFailure{Reason: f.Reason, At: f.At.UTC(), Error: f.Err, Output: f.Output}
	}
	return c
}

func (s *Sampler) feedCard(now time.Time, sl Silence) FeedCard {
	var c FeedCard
	if s.src.FeedConns != nil {
		c.Connections = s.src.FeedConns()
	}
	if s.src.Snapshot != nil {
		c.StateVersion = s.src.Snapshot().Version
	}
	c.StaleAfter = s.src.StaleAfter.Seconds()
	if s.src.LastFed != nil {
		if last := s.src.LastFed(); !last.IsZero() {
			last = last.UTC()
			age := math.Round(max(now.Sub(last).Seconds(), 0)*10) / 10
			c.LastMessage, c.LastMessageAge = &last, &age
			if sl.Feed {
				since := last.Add(s.src.StaleAfter)
				c.Stale, c.SilentSince = true, &since
			}
		}
	}
	return c
}

// trafficCard lists the protocols in demux order (live, the live ones
// first), "unknown" last.
func (s *Sampler) trafficCard(live []string) TrafficCard {
	c := TrafficCard{Interval: Interval.Seconds(), Times: []int64{}, Protocols: []ProtoTraffic{},
		UnprovenUse: s.unproven.values([]float64{}), Outcomes: Outcomes}
	for i, u := range c.UnprovenUse {
		c.UnprovenUse[i] = math.Round(u*1000) / 1000
	}
	for _, t := range s.times.values(nil) {
		c.Times = append(c.Times, int64(t))
	}
	order := slices.Clone(s.order)
	rank := func(p string) int {
		if p == "unknown" {
			return len(live) + 1
		}
		if i := slices.Index(live, p); i >= 0 {
			return i
		}
		return len(live) // no longer live (a reload turned it off)
	}
	slices.SortStableFunc(order, func(a, b string) int { return rank(a) - rank(b) })
	for _, p := range order {
		ps := s.traffic[p]
		c.Protocols = append(c.Protocols, ProtoTraffic{Name: p, PerS: ringValues(ps.rates), Totals: totals(ps.totals, ps.rates)})
	}
	return c
}

func (s *Sampler) relayCard() *RelayCard {
	if !s.relay.on {
		return nil
	}
	return &RelayCard{
		Sessions: s.relay.sessions.values([]float64{}),
		PerS:     ringValues(s.relay.rates),
		Totals:   totals(s.relay.totals, s.relay.rates),
	}
}

func (s *Sampler) heartbeatCard() *HeartbeatCard {
	b := &s.beats
	if !b.on {
		return nil
	}
	return &HeartbeatCard{
		Heartbeats: b.sent, Flatlines: b.flat, Errors: b.err, MasterGetinfo: b.asks,
		LastHeartbeat: timeOrNil(b.heartbeat), LastGetinfo: timeOrNil(b.getinfo),
	}
}

func (s *Sampler) busiestCard() BusiestCard {
	c := BusiestCard{Window: BusiestWindow, Sources: []SourceReport{}}
	for _, sc := range s.busiest.top(BusiestShown) {
		c.Sources = append(c.Sources, sourceReport(sc))
	}
	return c
}

func sourceReport(sc responder.SourceCount) SourceReport {
	r := SourceReport{Source: sc.Source.String(), Requests: sc.Requests, Outcomes: map[string]uint64{}}
	if sc.Source.Addr().Is4() {
		r.Source = sc.Source.Addr().String()
	}
	for i, n := range sc.Outcomes {
		if n != 0 {
			r.Outcomes[responder.SourceOutcomes[i]] = n
		}
	}
	return r
}

// ringValues returns every ring's values, rates rounded to a tenth.
func ringValues(rings map[string]*ring) map[string][]float64 {
	out := make(map[string][]float64, len(rings))
	for name, r := range rings {
		vs := r.values(make([]float64, 0, r.n))
		for i, v := range vs {
			vs[i] = math.Round(v*10) / 10
		}
		out[name] = vs
	}
	return out
}

// totals returns the counters of every series in rings (0 for those not
// seen yet).
func totals(counted map[string]float64, rings map[string]*ring) map[string]float64 {
	out := make(map[string]float64, len(rings))
	for name := range rings {
		out[name] = counted[name]
	}
	return out
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}
