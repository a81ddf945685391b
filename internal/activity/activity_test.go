package activity

import (
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const after = 10 * time.Second
	var c Clock
	if !c.Last().IsZero() || !c.Since().IsZero() || c.Quiet(t0, after) {
		t.Fatal("a clock that never spoke has no times and is not quiet")
	}
	c.Note(t0, after)
	c.Note(t0.Add(5*time.Second), after)
	c.Note(t0.Add(14*time.Second), after)
	if !c.Since().Equal(t0) || !c.Last().Equal(t0.Add(14*time.Second)) {
		t.Fatalf("a run without gaps: since %v last %v", c.Since(), c.Last())
	}
	if c.Quiet(t0.Add(24*time.Second), after) || !c.Quiet(t0.Add(25*time.Second), after) {
		t.Fatal("quiet only past after")
	}
	c.Note(t0.Add(30*time.Second), after)
	if !c.Since().Equal(t0.Add(30 * time.Second)) {
		t.Fatalf("a gap longer than after starts a run: since %v", c.Since())
	}
	var never Clock
	never.Note(t0, 0)
	never.Note(t0.Add(time.Hour), 0)
	if !never.Since().Equal(t0) || never.Quiet(t0.Add(48*time.Hour), 0) {
		t.Fatal("after 0: one run, never quiet")
	}
}

func TestRest(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const after = 10 * time.Second
	var none *Rest
	if none.Resting() || none.IsDown() || !none.Since().IsZero() || none.From(t0) != t0 || !none.Quiet(t0, t0.Add(11*time.Second), after) {
		t.Fatal("a nil rest: never resting, quiet as a clock")
	}
	var r Rest
	if r.Resting() || r.Quiet(time.Time{}, t0, after) {
		t.Fatal("awake; a source that never spoke is never quiet")
	}
	r.Down(t0.Add(20 * time.Second))
	if !r.Resting() || !r.IsDown() || !r.Since().Equal(t0.Add(20*time.Second)) {
		t.Fatalf("down: resting %v down %v since %v", r.Resting(), r.IsDown(), r.Since())
	}
	if r.Quiet(t0, t0.Add(time.Hour), after) {
		t.Fatal("no source is quiet while the server rests")
	}
	r.Waking()
	if !r.Resting() || r.IsDown() {
		t.Fatal("waking: resting, not down")
	}
	r.Down(t0.Add(40 * time.Second)) // a wake failed: the rest goes on
	if !r.Since().Equal(t0.Add(20 * time.Second)) {
		t.Fatalf("a failed wake keeps the rest's start, got %v", r.Since())
	}
	woke := t0.Add(time.Hour)
	r.Woke(woke)
	if r.Resting() || !r.Since().IsZero() {
		t.Fatal("woken: not resting")
	}
	if !r.From(t0).Equal(woke) || !r.From(woke.Add(time.Second)).Equal(woke.Add(time.Second)) {
		t.Fatalf("From: the later of the last word and the wake: %v", r.From(t0))
	}
	if r.Quiet(t0, woke.Add(after), after) || !r.Quiet(t0, woke.Add(after+time.Nanosecond), after) {
		t.Fatal("quiet counts from the wake")
	}
}
