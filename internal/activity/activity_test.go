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
