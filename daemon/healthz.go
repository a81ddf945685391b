package daemon

import (
	"encoding/json"
	"net/http"
	"time"
)

// serverHealth is one server's answer in /healthz and /healthz/NAME.
type serverHealth struct {
	OK bool `json:"ok"`
	// State is the server's State (answering, not_fed, asleep, silent, down), since
	// when (a server that does not run: none).
	State      State      `json:"state"`
	StateSince *time.Time `json:"state_since,omitempty"`
	// Fed: a source (a feeder, the game server) has sent the game's state;
	// false while queryd answers [server].
	Fed bool `json:"fed"`
	// Asleep: [sleep]: the game server is stopped on purpose (or being
	// stopped or woken); queryd answers its last state with no players.
	Asleep  bool   `json:"asleep"`
	Version uint64 `json:"version"`
	// Silent is the server answering nothing, under /healthz's older
	// name "stale" (the contract keeps it); Reason says which source is.
	Silent bool       `json:"stale"`
	Reason string     `json:"reason,omitempty"` // why it is silent, or "down" when it does not run
	Since  *time.Time `json:"since,omitempty"`  // when it fell silent
	Error  string     `json:"error,omitempty"`  // why it does not run (its file refused, its start or a part failed)
}

// health is server s's health at now.
func (s *Server) health(now time.Time) serverHealth {
	sl := s.silence.at(now)
	since := sl.Since.UTC()
	h := serverHealth{OK: !sl.Silent, State: sl.State, StateSince: &since, Fed: sl.Fed, Asleep: sl.State == StateAsleep,
		Version: s.store.Snapshot().Version, Silent: sl.Silent}
	if sl.Silent {
		h.Reason, h.Since = string(sl.Reason), &since
	}
	return h
}

// health is a server's that does not run.
func (ds downServer) health() serverHealth {
	return serverHealth{State: StateDown, Reason: "down", Error: ds.err.Error()}
}

// serveHealthz answers 200 while every server answers (the game's state,
// [server] while not fed yet, or asleep its last state), 503 while one is
// silent or does not run. The body is the first server's answer (ok,
// state and since when, fed, asleep, version, stale, and while silent the
// reason and since when), and
// with several servers "servers": each one's answer by name.
func (d *Daemon) serveHealthz(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	all := map[string]serverHealth{}
	ok := true
	var first *serverHealth
	for _, s := range d.running() {
		h := s.health(now)
		all[s.name] = h
		ok = ok && h.OK
		if first == nil {
			first = &h
		}
	}
	for _, ds := range d.downServers() {
		all[ds.name] = ds.health()
		ok = false
	}
	body := map[string]any{"ok": ok}
	if first != nil {
		body["state"], body["state_since"], body["fed"], body["asleep"] = first.State, first.StateSince, first.Fed, first.Asleep
		body["version"], body["stale"] = first.Version, first.Silent
		if first.Silent {
			body["reason"], body["since"] = first.Reason, first.Since
		}
	}
	if d.multi.Load() {
		body["servers"] = all
	}
	writeHealth(w, ok, body)
}

// serveServerHealthz is /healthz/NAME: the server's answer, 200 while it
// answers, 503 while it is silent or does not run, 404 for a name the host
// has not.
func (d *Daemon) serveServerHealthz(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("server")
	if s := d.Server(name); s != nil {
		h := s.health(time.Now())
		writeHealth(w, h.OK, h)
		return
	}
	if ds, ok := d.downServer(name); ok {
		writeHealth(w, false, ds.health())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	b, _ := json.Marshal(map[string]any{"ok": false, "error": errNoServer.Error(), "server": name})
	w.Write(append(b, '\n'))
}

// writeHealth writes body as JSON, with 503 unless ok.
func writeHealth(w http.ResponseWriter, ok bool, body any) {
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	w.Write(append(b, '\n'))
}
