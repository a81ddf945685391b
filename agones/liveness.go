package agones

import "time"

// Stale reports whether queryd must answer nothing of the GameServer at
// now: none has been read yet, its state is not one that takes players
// (ClassStarting, ClassSilent), or the SDK server has given nothing that
// could be read for Options.StaleAfter (the last GameServer read is kept
// meanwhile, and served again once a read comes). It logs when the reads
// stop and come back, once each. It allocates nothing.
func (w *Watcher) Stale(now time.Time) bool {
	quiet := w.quietAt(now)
	v := w.view.Load()
	return v == nil || v.class != ClassAnswering || quiet
}

// quietAt reports whether the SDK server has given nothing readable for
// StaleAfter at now (never before the first read, nor with StaleAfter 0),
// logging the changes.
func (w *Watcher) quietAt(now time.Time) bool {
	last := w.lastRead.Load()
	quiet := w.staleAfter > 0 && last != 0 && now.UnixNano()-last > int64(w.staleAfter)
	if quiet != w.quiet.Load() && w.quiet.CompareAndSwap(!quiet, quiet) {
		switch {
		case quiet:
			w.wasQuiet.Store(true)
			w.log.Warn("the Agones SDK server has given no GameServer for stale_after: answering nothing until it does",
				"sdk", w.sdk, "stale_after", w.staleAfter)
		case w.wasQuiet.Load():
			w.log.Info("the Agones SDK server is read again", "sdk", w.sdk)
		}
	}
	return quiet
}

// Class returns the class of the last GameServer read and since when it
// has been that class (ClassUnread and the zero Time before the first).
// It allocates nothing.
func (w *Watcher) Class() (Class, time.Time) {
	if v := w.view.Load(); v != nil {
		return v.class, v.since
	}
	return ClassUnread, time.Time{}
}

// AnsweringSince returns when the current run of answering reads began:
// the read that made the class ClassAnswering, or the first read after a
// gap longer than StaleAfter (zero: the GameServer was never read in a
// state that takes players). It stays set while the class is another; the
// next run starts it again.
func (w *Watcher) AnsweringSince() time.Time { return unixTime(w.runSince.Load()) }

// unixTime is n unix nanoseconds as a Time (zero for 0).
func unixTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}
