package sleep

import "time"

// Status is what the Sleeper says of the server's sleep cycle, for the
// status page's sleep card and /status.json.
type Status struct {
	Phase      Phase
	PhaseSince time.Time
	// AsleepSince is when the current rest began (the stop); zero while
	// the game server runs.
	AsleepSince time.Time
	After       time.Duration // [sleep] after
	// IdleUntil is, while idle, when stop runs unless a player comes.
	IdleUntil time.Time
	// Wakes are the wakes begun since queryd started, by cause ("join",
	// "feed"); Failures the failed ones by reason; Refused the wakes not
	// begun (the hour's wakes spent).
	Wakes    map[string]uint64
	Failures map[string]uint64
	Refused  uint64
	// WakesPerHour is [sleep] wakes_per_hour; WakesLastHour how many
	// began in the last hour.
	WakesPerHour, WakesLastHour int
	// LastWake is when the last wake began, LastWakeTook how long the
	// last good one took (0: none yet).
	LastWake     time.Time
	LastWakeTook time.Duration
	// LastFailure is the last wake or stop that failed (zero At: none).
	LastFailure Failure
	// Held and HeldBytes are the game datagrams held now.
	Held, HeldBytes int
}

// Status returns the sleep cycle's state at now.
func (s *Sleeper) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	p, since := s.mach.Phase()
	st := Status{
		Phase: p, PhaseSince: since, AsleepSince: s.mach.RestSince(), After: s.opts.After,
		Wakes: map[string]uint64{}, Failures: map[string]uint64{}, Refused: s.st.refused,
		WakesPerHour: s.opts.WakesPerHour, WakesLastHour: s.mach.wakesSince(now.Add(-time.Hour)),
		LastWake: s.st.lastWake, LastWakeTook: s.st.lastTook, LastFailure: s.st.lastFail,
	}
	if p == Idle {
		st.IdleUntil = s.mach.Next()
	}
	for _, c := range Causes {
		st.Wakes[c.String()] = s.st.wakes[c]
	}
	for _, r := range FailReasons {
		st.Failures[r] = s.st.fails[r]
	}
	st.Held, st.HeldBytes = s.hold.size()
	return st
}
