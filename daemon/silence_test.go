package daemon

import (
	"testing"
	"time"

	"github.com/queryd/queryd/internal/activity"
)

// The silence value: not fed yet (serving [server]), fed, each cause
// alone, both (the one that began first is the reason, both are named),
// not yet answered since the start, the deadline while answering (the
// earlier of the feed's and the game server's), and nothing without
// stale_after. Whether a cause holds is its owner's Stale; here stand-ins
// with the same rules.
func TestSilence(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	start := t0.Add(-time.Minute)
	const after = 10 * time.Second
	type c struct {
		name          string
		after         time.Duration
		fed, answered time.Time // the last activity; zero: never
		pinged        bool      // the feed's activity was pings only
		upstream      bool
		want          Silence
	}
	ago := func(d time.Duration) time.Time { return t0.Add(-d) }
	causes := func(rs ...Reason) Causes {
		var c Causes
		c.n = copy(c.r[:], rs)
		return c
	}
	for _, tc := range []c{
		{name: "nothing yet, no upstream", after: after,
			want: Silence{State: StateNotFed, Since: start}},
		{name: "pinged only: still not fed", after: after, fed: ago(4 * time.Second), pinged: true,
			want: Silence{State: StateNotFed, Since: start, Deadline: t0.Add(6 * time.Second)}},
		{name: "fed recently", after: after, fed: ago(4 * time.Second),
			want: Silence{State: StateAnswering, Fed: true, Since: ago(4 * time.Second), Deadline: t0.Add(6 * time.Second)}},
		{name: "feed stale", after: after, fed: ago(15 * time.Second),
			want: Silence{State: StateSilent, Silent: true, Fed: true, Reason: ReasonFeed, Causes: causes(ReasonFeed), Since: t0.Add(-5 * time.Second)}},
		{name: "pinged, then stale", after: after, fed: ago(15 * time.Second), pinged: true,
			want: Silence{State: StateSilent, Silent: true, Reason: ReasonFeed, Causes: causes(ReasonFeed), Since: t0.Add(-5 * time.Second)}},
		{name: "upstream never answered", after: after, upstream: true,
			want: Silence{State: StateSilent, Silent: true, Reason: ReasonUnanswered, Causes: causes(ReasonUnanswered), Since: start}},
		{name: "upstream answered", after: after, upstream: true, answered: ago(3 * time.Second),
			want: Silence{State: StateAnswering, Fed: true, Since: ago(3 * time.Second), Deadline: t0.Add(7 * time.Second)}},
		{name: "upstream stale", after: after, upstream: true, answered: ago(12 * time.Second), fed: ago(time.Second),
			want: Silence{State: StateSilent, Silent: true, Fed: true, Reason: ReasonUpstream, Causes: causes(ReasonUpstream), Since: ago(2 * time.Second)}},
		{name: "both: the feed first", after: after, upstream: true, answered: ago(11 * time.Second), fed: ago(30 * time.Second),
			want: Silence{State: StateSilent, Silent: true, Fed: true, Reason: ReasonFeed, Causes: causes(ReasonFeed, ReasonUpstream), Since: ago(20 * time.Second)}},
		{name: "both: the game server first", after: after, upstream: true, answered: ago(40 * time.Second), fed: ago(30 * time.Second),
			want: Silence{State: StateSilent, Silent: true, Fed: true, Reason: ReasonUpstream, Causes: causes(ReasonUpstream, ReasonFeed), Since: ago(30 * time.Second)}},
		{name: "the earlier deadline, the later run", after: after, upstream: true, answered: ago(2 * time.Second), fed: ago(8 * time.Second),
			want: Silence{State: StateAnswering, Fed: true, Since: ago(2 * time.Second), Deadline: t0.Add(2 * time.Second)}},
		{name: "no stale_after", upstream: true, fed: ago(time.Hour),
			want: Silence{State: StateAnswering, Fed: true, Since: ago(time.Hour)}},
		{name: "no stale_after, never fed", upstream: true,
			want: Silence{State: StateNotFed, Since: start}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := standIn(tc.after, start, tc.fed, tc.answered, tc.pinged, tc.upstream)
			if got := s.at(t0); got != tc.want {
				t.Errorf("at: %+v\nwant %+v", got, tc.want)
			}
			if got := s.silent(t0); got != tc.want.Silent {
				t.Errorf("silent: %v", got)
			}
			want := tc.want.Since
			if !tc.want.Silent {
				want = tc.want.Deadline
			}
			if got := s.at(t0).From(); !got.Equal(want) {
				t.Errorf("From: %v, want %v", got, want)
			}
		})
	}
}

// fakeSource is a source by the owners' rules: last is its last activity
// (a run since then; zero: never), fed whether it sent state; never: it
// silences before its first activity (the game server's rule).
type fakeSource struct {
	after     time.Duration
	start     time.Time
	last      time.Time
	fedState  bool
	never     bool
	late, old Reason // the cause after a quiet of after; before any activity
}

func (f fakeSource) stale(now time.Time) bool {
	if f.after <= 0 {
		return false
	}
	if f.last.IsZero() {
		return f.never
	}
	return now.Sub(f.last) > f.after
}

func (f fakeSource) cause() (Reason, time.Time) {
	if f.last.IsZero() {
		return f.old, f.start
	}
	return f.late, f.last.Add(f.after)
}

func (f fakeSource) deadline() time.Time {
	if f.after <= 0 || f.last.IsZero() {
		return time.Time{}
	}
	return f.last.Add(f.after)
}

func (f fakeSource) fed() (bool, time.Time) { return f.fedState, f.last }

// standIn is a silence over a feed last active at fed (pings only when
// pinged) and (with upstream) a game server last answering at answered.
func standIn(after time.Duration, start, fed, answered time.Time, pinged, upstream bool) *silence {
	s := &silence{start: start, sources: []source{fakeSource{after: after, last: fed, fedState: !fed.IsZero() && !pinged, late: ReasonFeed}}}
	if upstream {
		s.sources = append(s.sources, fakeSource{after: after, start: start, last: answered, fedState: !answered.IsZero(),
			never: true, late: ReasonUpstream, old: ReasonUnanswered})
	}
	return s
}

// The responder asks the silence once per receive batch: it allocates nothing.
func TestSilenceNoAlloc(t *testing.T) {
	t0 := time.Now()
	s := standIn(10*time.Second, t0, t0, t0.Add(-time.Second), false, true)
	if n := testing.AllocsPerRun(100, func() { s.silent(t0) }); n != 0 {
		t.Errorf("silent allocates %.0f times", n)
	}
	if n := testing.AllocsPerRun(100, func() { s.from() }); n != 0 {
		t.Errorf("from allocates %.0f times", n)
	}
}

// TestSilenceAsleep: while the server rests ([sleep]) its state is asleep
// since the rest began, never silent and with no deadline (the XDP
// program answers), whatever its sources say; fed as they say. Awake
// again, the sources' rule holds. It allocates nothing.
func TestSilenceAsleep(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	start := t0.Add(-time.Hour)
	s := standIn(10*time.Second, start, t0.Add(-time.Minute), time.Time{}, false, true) // feed stale, upstream never answered
	s.rest = &activity.Rest{}
	if got := s.at(t0); !got.Silent {
		t.Fatalf("awake: %+v", got)
	}
	s.rest.Down(t0.Add(-30 * time.Second))
	if got := s.at(t0); got.State != StateAsleep || !got.Fed || got.Silent || got.Reason != "" || !got.Since.Equal(t0.Add(-30*time.Second)) || !got.Deadline.IsZero() {
		t.Fatalf("asleep: %+v", got)
	}
	if s.silent(t0) || !s.at(t0).From().IsZero() {
		t.Fatal("asleep: silent, or the XDP program told to be")
	}
	s.rest.Waking()
	if got := s.at(t0); got.State != StateAsleep || got.Silent {
		t.Fatalf("waking: %+v", got)
	}
	if n := testing.AllocsPerRun(100, func() { s.silent(t0); s.at(t0) }); n != 0 {
		t.Errorf("asleep: silent and at allocate %.0f times", n)
	}
	s.rest.Woke(t0)
	if got := s.at(t0); got.State != StateSilent {
		t.Fatalf("awake again, the stand-ins' rule (they ignore the rest): %+v", got)
	}
}
