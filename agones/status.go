package agones

import "time"

// Status is what the watcher knows of the GameServer now: for the daemon's
// liveness rule (answer, not yet, silent), the status page and
// /status.json.
type Status struct {
	// SDK is the SDK server's address, "HOST:PORT".
	SDK string
	// State is the GameServer's state as Agones last said it ("Ready");
	// "" before the first read.
	State string
	// Class is what State means for queryd (ClassUnread before the first
	// read).
	Class Class
	// ClassSince is when Class began: the read that changed it (zero
	// before the first read).
	ClassSince time.Time
	// AnsweringSince is when the current run of answering reads began
	// (zero: never read in a state that takes players).
	AnsweringSince time.Time
	// LastRead is when the SDK server last gave a GameServer that could
	// be read (a watch line or a GET answer, applied or not new); zero:
	// never since the watcher started. While the SDK server answers it is
	// at most [agones] interval old; past [feed] stale_after queryd is
	// silent, as with a stale feed.
	LastRead time.Time
	// Watching reports whether the watch stream is open now.
	Watching bool
	// LastError is why the last read failed or was refused; "" when the
	// last read was good.
	LastError string
}

// Status returns what the watcher knows now. It does not allocate.
func (w *Watcher) Status() Status {
	s := Status{SDK: w.sdk, LastRead: w.LastRead(), Watching: w.watching.Load(), AnsweringSince: w.AnsweringSince()}
	if v := w.view.Load(); v != nil {
		s.State, s.Class, s.ClassSince = v.state, v.class, v.since
	}
	if e := w.lastErr.Load(); e != nil {
		s.LastError = *e
	}
	return s
}

// LastRead returns when the SDK server last gave a GameServer that could
// be read (zero: never).
func (w *Watcher) LastRead() time.Time { return unixTime(w.lastRead.Load()) }

// Doc returns the last document published (nil before the first). It is
// shared: callers must not change it.
func (w *Watcher) Doc() map[string]any {
	if v := w.view.Load(); v != nil {
		return v.doc
	}
	return nil
}
