package sleep

import (
	"errors"
	"testing"
	"time"
)

var t0 = time.Unix(1_700_000_000, 0)

func testMachine(wakes int) *Machine {
	return NewMachine(Settings{After: 10 * time.Second, ReadyTimeout: 30 * time.Second, WakesPerHour: wakes}, t0)
}

// at is t0 plus d.
func at(d time.Duration) time.Time { return t0.Add(d) }

func wantPhase(t *testing.T, m *Machine, want Phase) {
	t.Helper()
	if p, _ := m.Phase(); p != want {
		t.Fatalf("phase %s, want %s", p, want)
	}
}

func wantTake(t *testing.T, m *Machine, want Action) Outcome {
	t.Helper()
	a, o := m.Take()
	if a != want {
		t.Fatalf("action %d, want %d (outcome %+v)", a, want, o)
	}
	return o
}

// sleepAt takes m from idle since t0 to asleep: stop runs at after.
func sleepAt(t *testing.T, m *Machine, now time.Time) {
	t.Helper()
	m.Tick(now)
	wantPhase(t, m, Stopping)
	wantTake(t, m, ActStop)
	m.StopDone(nil, now)
	wantPhase(t, m, Asleep)
	if o := wantTake(t, m, ActNone); !o.Slept {
		t.Fatalf("asleep without Slept: %+v", o)
	}
}

// TestMachineCycle: idle from the start; a player keeps it awake; stop
// runs once it has had no players for after (not before); asleep, a
// join wakes it once (the second is pending), start runs, and it is
// awake when the game server answers after start exited 0, and idle
// again from then.
func TestMachineCycle(t *testing.T) {
	m := testMachine(6)
	wantPhase(t, m, Idle)
	if !m.Next().Equal(at(10 * time.Second)) {
		t.Fatalf("Next %v, want after from the start", m.Next())
	}
	m.Players(2, at(5*time.Second))
	wantPhase(t, m, Awake)
	m.Tick(at(time.Hour))
	wantPhase(t, m, Awake)
	if v := m.Join(CauseJoin, at(time.Hour)); v != Running {
		t.Fatalf("join while awake: %d", v)
	}
	m.Players(0, at(time.Hour))
	wantPhase(t, m, Idle)
	m.Tick(at(time.Hour + 9*time.Second))
	wantPhase(t, m, Idle)
	sleepAt(t, m, at(time.Hour+10*time.Second))
	if !m.RestSince().Equal(at(time.Hour + 10*time.Second)) {
		t.Fatalf("rest since %v", m.RestSince())
	}

	w := at(2 * time.Hour)
	if v := m.Join(CauseJoin, w); v != Woken {
		t.Fatalf("join while asleep: %d", v)
	}
	if o := wantTake(t, m, ActStart); !o.Woke || o.Cause != CauseJoin {
		t.Fatalf("outcome %+v", o)
	}
	if v := m.Join(CauseFeed, w.Add(time.Second)); v != Pending {
		t.Fatalf("join while waking: %d", v)
	}
	wantTake(t, m, ActNone)
	if m.Ready(w.Add(time.Second)) {
		t.Fatal("ready before start exited")
	}
	m.StartDone(nil, w.Add(2*time.Second))
	if !m.Started() || !m.WakeAt().Equal(w) {
		t.Fatal("start exited 0: started, wake at its beginning")
	}
	if !m.Ready(w.Add(3 * time.Second)) {
		t.Fatal("not ready")
	}
	o := wantTake(t, m, ActNone)
	if !o.Ready || o.Took != 3*time.Second {
		t.Fatalf("ready outcome %+v", o)
	}
	wantPhase(t, m, Idle)
	if !m.RestSince().IsZero() || !m.Next().Equal(w.Add(13*time.Second)) {
		t.Fatalf("after the wake: rest since %v, next %v", m.RestSince(), m.Next())
	}
}

// TestMachineWakeFails: start exiting non-zero, start still running at
// ready_timeout, and a start that exited 0 with no answer by then each
// fail the wake with their reason; stop runs to clean up, and it is asleep
// again whatever stop says; joins meanwhile are refused; the next join
// may wake it again.
func TestMachineWakeFails(t *testing.T) {
	for _, tc := range []struct {
		reason string
		fail   func(m *Machine, w time.Time)
	}{
		{FailStart, func(m *Machine, w time.Time) { m.StartDone(errors.New("exit status 1"), w.Add(time.Second)) }},
		{FailStartTimeout, func(m *Machine, w time.Time) { m.Tick(w.Add(30 * time.Second)) }},
		{FailNotReady, func(m *Machine, w time.Time) {
			m.StartDone(nil, w.Add(time.Second))
			m.Tick(w.Add(29 * time.Second))
			wantPhase(t, m, Waking)
			m.Tick(w.Add(30 * time.Second))
		}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			m := testMachine(6)
			sleepAt(t, m, at(10*time.Second))
			w := at(time.Minute)
			m.Join(CauseFeed, w)
			wantTake(t, m, ActStart)
			tc.fail(m, w)
			wantPhase(t, m, Stopping)
			if o := wantTake(t, m, ActStop); o.Failed != tc.reason {
				t.Fatalf("failed %q, want %q", o.Failed, tc.reason)
			}
			if v := m.Join(CauseJoin, w.Add(31*time.Second)); v != Cleaning {
				t.Fatalf("join during the clean-up: %d", v)
			}
			m.StartDone(nil, w.Add(32*time.Second)) // a killed start's late end changes nothing
			m.StopDone(errors.New("exit status 5"), w.Add(33*time.Second))
			wantPhase(t, m, Asleep)
			if o := wantTake(t, m, ActNone); o.Slept || o.StopFail {
				t.Fatalf("a clean-up stop is no sleep of its own: %+v", o)
			}
			if !m.RestSince().Equal(at(10 * time.Second)) {
				t.Fatalf("the rest goes on from its stop: %v", m.RestSince())
			}
			if v := m.Join(CauseJoin, w.Add(time.Minute)); v != Woken {
				t.Fatalf("next join: %d", v)
			}
		})
	}
}

// TestMachineWakesPerHour: at most wakes_per_hour wakes begin in any
// hour, whatever asks (joins and the feed); a wake may begin again once
// the first of them is an hour old. A flood of joins while asleep begins
// none past the bound.
func TestMachineWakesPerHour(t *testing.T) {
	m := testMachine(2)
	now := at(10 * time.Second)
	sleepAt(t, m, now)
	wakes := 0
	cycle := func() {
		t.Helper()
		for i := 0; i < 1000; i++ { // a flood: every datagram asks
			now = now.Add(time.Millisecond)
			switch m.Join(Cause(i%2), now) {
			case Woken:
				wakes++
				m.Take()
				m.StartDone(nil, now)
				m.Ready(now)
				m.Take()
				sleepAt(t, m, now.Add(10*time.Second))
				now = now.Add(10 * time.Second)
			case Refused:
				wantTake(t, m, ActNone)
			}
		}
	}
	cycle()
	if wakes != 2 {
		t.Fatalf("%d wakes within the hour, want 2", wakes)
	}
	now = at(time.Hour + 11*time.Second) // the first wake is an hour old
	if v := m.Join(CauseJoin, now); v != Woken {
		t.Fatalf("an hour after the first wake: %d", v)
	}
}

// TestMachineStopFails: a stop that fails leaves the game server taken to
// run (idle), and stop is tried again after after, then twice as long,
// and so on; a player meanwhile resets it.
func TestMachineStopFails(t *testing.T) {
	m := testMachine(6)
	now := at(10 * time.Second)
	for i, wait := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second} {
		m.Tick(now)
		wantTake(t, m, ActStop)
		m.StopDone(errors.New("exit status 1"), now)
		wantPhase(t, m, Idle)
		o := wantTake(t, m, ActNone)
		if !o.StopFail || !o.Retry.Equal(now.Add(wait)) || !m.Next().Equal(now.Add(wait)) {
			t.Fatalf("failure %d: %+v, next %v, want a retry after %s", i+1, o, m.Next(), wait)
		}
		m.Tick(now.Add(wait - time.Millisecond))
		wantPhase(t, m, Idle)
		now = now.Add(wait)
	}
	m.Players(1, now)
	m.Players(0, now)
	if !m.Next().Equal(now.Add(10 * time.Second)) {
		t.Fatalf("a player resets the back-off: next %v", m.Next())
	}
}

// TestMachineWakeWhileStopping: the feed's wake while stop runs is kept:
// the wake begins as soon as the server is asleep.
func TestMachineWakeWhileStopping(t *testing.T) {
	m := testMachine(6)
	m.Tick(at(10 * time.Second))
	wantTake(t, m, ActStop)
	if v := m.Join(CauseFeed, at(11*time.Second)); v != Pending {
		t.Fatalf("wake while stopping: %d", v)
	}
	m.StopDone(nil, at(12*time.Second))
	wantPhase(t, m, Waking)
	if o := wantTake(t, m, ActStart); !o.Slept || !o.Woke || o.Cause != CauseFeed {
		t.Fatalf("outcome %+v", o)
	}
}

// TestMachineUnanswered: a game server that never answered since queryd
// started is stopped at once (to make sure) and asleep; one with players,
// or already stopping, is left alone.
func TestMachineUnanswered(t *testing.T) {
	m := testMachine(6)
	m.Unanswered(at(time.Second))
	wantPhase(t, m, Stopping)
	wantTake(t, m, ActStop)
	m.StopDone(nil, at(2*time.Second))
	wantPhase(t, m, Asleep)
	m = testMachine(6)
	m.Players(1, t0)
	m.Unanswered(at(time.Second))
	wantPhase(t, m, Awake)
}

// TestMachineNeverWithoutAfter: after 0 never sleeps.
func TestMachineNeverWithoutAfter(t *testing.T) {
	m := NewMachine(Settings{ReadyTimeout: time.Second, WakesPerHour: 1}, t0)
	m.Players(0, t0)
	m.Tick(at(1000 * time.Hour))
	wantPhase(t, m, Awake)
	wantTake(t, m, ActNone)
}
