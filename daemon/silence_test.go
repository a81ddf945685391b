package daemon

import (
	"testing"
	"time"
)

// The silence value: each cause alone, both (the one that began first is
// the reason, both are named), not yet answered since the start, the
// deadline while answering (the earlier of the feed's and the game
// server's), and nothing without stale_after. Whether a cause holds is
// its owner's Stale; here a stand-in with the same rule (quiet for longer
// than stale_after since its last message).
func TestSilence(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const after = 10 * time.Second
	type c struct {
		name          string
		after         time.Duration
		fed, answered time.Time // zero: never
		upstream      bool
		now           time.Time
		want          Silence
	}
	ago := func(d time.Duration) time.Time { return t0.Add(-d) }
	for _, tc := range []c{
		{name: "nothing yet, no upstream", after: after, now: t0, want: Silence{}},
		{name: "fed recently", after: after, fed: ago(4 * time.Second), now: t0,
			want: Silence{Deadline: t0.Add(6 * time.Second)}},
		{name: "feed stale", after: after, fed: ago(15 * time.Second), now: t0,
			want: Silence{Silent: true, Reason: ReasonFeed, Feed: true, Since: t0.Add(-5 * time.Second)}},
		{name: "upstream never answered", after: after, upstream: true, now: t0,
			want: Silence{Silent: true, Reason: ReasonUnanswered, Upstream: ReasonUnanswered, Since: ago(time.Minute)}},
		{name: "upstream answered", after: after, upstream: true, answered: ago(3 * time.Second), now: t0,
			want: Silence{Deadline: t0.Add(7 * time.Second)}},
		{name: "upstream stale", after: after, upstream: true, answered: ago(12 * time.Second), fed: ago(time.Second), now: t0,
			want: Silence{Silent: true, Reason: ReasonUpstream, Upstream: ReasonUpstream, Since: ago(2 * time.Second)}},
		{name: "both: the feed first", after: after, upstream: true, answered: ago(11 * time.Second), fed: ago(30 * time.Second), now: t0,
			want: Silence{Silent: true, Reason: ReasonFeed, Feed: true, Upstream: ReasonUpstream, Since: ago(20 * time.Second)}},
		{name: "the earlier deadline", after: after, upstream: true, answered: ago(2 * time.Second), fed: ago(8 * time.Second), now: t0,
			want: Silence{Deadline: t0.Add(2 * time.Second)}},
		{name: "no stale_after", upstream: true, fed: ago(time.Hour), now: t0, want: Silence{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := standIn(tc.after, ago(time.Minute), tc.fed, tc.answered, tc.upstream)
			if got := s.at(tc.now); got != tc.want {
				t.Errorf("at: %+v\nwant %+v", got, tc.want)
			}
			if got := s.silent(tc.now); got != tc.want.Silent {
				t.Errorf("silent: %v", got)
			}
			want := tc.want.Since
			if !tc.want.Silent {
				want = tc.want.Deadline
			}
			if got := s.at(tc.now).From(); !got.Equal(want) {
				t.Errorf("From: %v, want %v", got, want)
			}
		})
	}
}

// standIn is a silence over a feed last fed at fed and (with upstream) a
// game server last answering at answered, each stale by the owners' rule.
func standIn(after time.Duration, start, fed, answered time.Time, upstream bool) *silence {
	stale := func(last time.Time, never bool) func(time.Time) bool {
		return func(now time.Time) bool {
			if after <= 0 {
				return false
			}
			if last.IsZero() {
				return never
			}
			return now.Sub(last) > after
		}
	}
	s := &silence{after: after, start: start, feedStale: stale(fed, false), lastFed: func() time.Time { return fed }}
	if upstream {
		s.upStale, s.lastAnswer = stale(answered, true), func() time.Time { return answered }
	}
	return s
}

// The responder asks the silence once per receive batch: it allocates nothing.
func TestSilenceNoAlloc(t *testing.T) {
	t0 := time.Now()
	s := standIn(10*time.Second, t0, t0, t0.Add(-time.Second), true)
	if n := testing.AllocsPerRun(100, func() { s.silent(t0) }); n != 0 {
		t.Errorf("silent allocates %.0f times", n)
	}
	if n := testing.AllocsPerRun(100, func() { s.from() }); n != 0 {
		t.Errorf("from allocates %.0f times", n)
	}
}
