package daemon

import (
	"time"

	"github.com/queryd/queryd/agones"
)

// newAgones makes the watcher of the Agones SDK server when [agones] is on
// (nil otherwise): the GameServer, mapped, is the store's game server layer,
// between [server] and the feed (config refuses [agones] with [upstream]:
// both would make that layer), and its class is one of the server's
// sources of silence (agonesSource). Its metrics carry the server's label.
func (s *Server) newAgones() (part, error) {
	sec, _ := s.cfg.Section(agones.Name).(*agones.Config)
	if sec == nil || !sec.On() {
		return nil, nil
	}
	w, err := agones.New(sec, agones.Options{
		Publish: func(doc map[string]any) error {
			_, err := s.store.SetGameServer(doc)
			return err
		},
		Changed:    s.agonesChanged,
		StaleAfter: time.Duration(s.cfg.Feed.StaleAfter),
		Logger:     s.log.With("part", "agones"),
		Registry:   s.reg,
	})
	if err != nil {
		return nil, err
	}
	s.agones = w
	return w, nil
}

// agonesChanged is called when the GameServer's document or class
// changed: a class change alone (Ready to Shutdown) changes no snapshot,
// so the XDP program is told at once to read the server's silence again
// (else it would within its 50 ms sync); the sockets read it per batch.
func (s *Server) agonesChanged() {
	if s.fast != nil {
		s.fast.Changed(s.name)
	}
}

// agonesSource is the Agones GameServer as a source: it silences the
// server until the first GameServer is read, while the GameServer does not
// take players (Scheduled, RequestReady; Shutdown, Unhealthy, Error), and
// once the SDK server has given nothing readable for stale_after
// (agones.Watcher.Stale, which logs its own changes).
type agonesSource struct {
	w     *agones.Watcher
	after time.Duration
	start time.Time
}

func (a agonesSource) stale(now time.Time) bool { return a.w.Stale(now) }

// cause is the class's reason while the GameServer does not take players
// (the last thing Agones said; a silent SDK server adds nothing to it),
// else the reads' silence.
func (a agonesSource) cause() (Reason, time.Time) {
	class, since := a.w.Class()
	switch class {
	case agones.ClassUnread:
		return ReasonAgonesStarting, a.start
	case agones.ClassStarting:
		return ReasonAgonesStarting, since
	case agones.ClassSilent:
		return ReasonAgonesStopped, since
	}
	return ReasonAgones, a.w.LastRead().Add(a.after)
}

func (a agonesSource) deadline() time.Time {
	if last := a.w.LastRead(); a.after > 0 && !last.IsZero() {
		return last.Add(a.after)
	}
	return time.Time{}
}

func (a agonesSource) fed() (bool, time.Time) {
	since := a.w.AnsweringSince()
	return !since.IsZero(), since
}

var _ part = (*agones.Watcher)(nil)
