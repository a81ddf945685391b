package status

import (
	"encoding/json"
	"net/http"
	"time"
)

// ServerList is /servers.json: every server of the host, in the host's
// order (docs/status.md). The page shows it when the host runs more than
// one server, each row opening that server's page (/?server=NAME).
type ServerList struct {
	Schema  int       `json:"schema"`
	Now     time.Time `json:"now"`
	Servers []Row     `json:"servers"`
}

// Row is one server's line of the list.
type Row struct {
	Name  string `json:"name"`  // the server's name in the host ("main", a file's name)
	State string `json:"state"` // "running", or "down" (it does not run: Error says why)
	Error string `json:"error,omitempty"`
	// Title, Map, Players and MaxPlayers are the state's.
	Title      string   `json:"title"`
	Map        string   `json:"map"`
	Players    int      `json:"players"`
	MaxPlayers int      `json:"max_players"`
	Listen     []string `json:"listen"`
	// Silent: the server answers nothing (Reasons say why); Stale: its
	// feed is stale (one of the reasons). Fed: a feeder or the game server
	// has sent the game's state; a running server that is neither silent
	// nor fed answers [server] ("not fed yet").
	Silent  bool     `json:"silent"`
	Reasons []string `json:"reasons"`
	Stale   bool     `json:"stale"`
	Fed     bool     `json:"fed"`
	// Asleep: [sleep]: its game server is stopped on purpose; it answers
	// its last state with no players.
	Asleep bool `json:"asleep"`
	// RequestsPerS and AnsweredPerS are the last sample's queries per
	// second, every protocol together, and those answered.
	RequestsPerS float64 `json:"requests_per_s"`
	AnsweredPerS float64 `json:"answered_per_s"`
}

// Down is the row of a server that does not run.
func Down(name string, err error) Row {
	return Row{Name: name, State: "down", Error: err.Error(), Listen: []string{}, Reasons: []string{}}
}

// Row is the sampler's server as a line of the list, at now.
func (s *Sampler) Row(name string, now time.Time) Row {
	r := Row{Name: name, State: "running", Listen: []string{}, Reasons: []string{}}
	if s.src.Silence != nil {
		sl := s.src.Silence(now)
		r.Silent, r.Stale, r.Fed, r.Asleep = sl.Silent, sl.Feed, sl.Fed, sl.State == "asleep"
		r.Reasons = append(r.Reasons, sl.Reasons...)
	}
	if s.src.Snapshot != nil {
		snap := s.src.Snapshot()
		r.Title, r.Map, r.Players, r.MaxPlayers = snap.Name, snap.Map, len(snap.Players), snap.MaxPlayers
	}
	if s.src.Listen != nil {
		for _, ap := range s.src.Listen() {
			r.Listen = append(r.Listen, ap.String())
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ps := range s.traffic {
		for _, o := range Outcomes {
			if rg := ps.rates[o]; rg != nil && rg.n > 0 {
				v := rg.v[(rg.next-1+Samples)%Samples]
				r.RequestsPerS += v
				if o == "answered" {
					r.AnsweredPerS += v
				}
			}
		}
	}
	return r
}

// Host is what the page reads from a host of servers.
type Host struct {
	// Sampler returns the named server's sampler ("": the first
	// server's); nil when the host has no such server.
	Sampler func(name string) *Sampler
	// Servers returns /servers.json as of the last sample.
	Servers func() []byte
	// Down returns why the named server of the host does not run (nil:
	// it runs, or the host has no such server).
	Down func(name string) error
	// Count is how many servers the host runs, down ones included.
	Count func() int
}

// RegisterHost adds the page's routes for a host of servers to mux: GET /
// (the page), its script and style, GET /status.json (the first server's
// document; ?server=NAME another's, 404 for a name the host has not) and
// GET /servers.json (the list). A server of the host that does not run
// has a document of its own: its state "down" and why (downReport).
func RegisterHost(mux *http.ServeMux, h Host) {
	mux.Handle("GET /{$}", file("page/index.html", "text/html; charset=utf-8"))
	mux.Handle("GET /status.js", file("page/status.js", "text/javascript; charset=utf-8"))
	mux.Handle("GET /status.css", file("page/status.css", "text/css; charset=utf-8"))
	mux.HandleFunc("GET /status.json", func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Query().Get("server")
		s := h.Sampler(name)
		if s == nil && name != "" && h.Down != nil {
			if err := h.Down(name); err != nil {
				writeJSON(w, downReport(err, h.Count, time.Now()))
				return
			}
		}
		if s == nil {
			b, _ := json.Marshal(map[string]string{"error": "no such server", "server": name})
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write(append(b, '\n'))
			return
		}
		s.serveJSON(w, r)
	})
	mux.HandleFunc("GET /servers.json", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, h.Servers())
	})
}

// downReport is /status.json?server=NAME for a server that does not run:
// the schema, the time, the host's count and the state card ("down", with
// the error); no other card.
func downReport(err error, count func() int, now time.Time) []byte {
	doc := struct {
		Schema  int       `json:"schema"`
		Now     time.Time `json:"now"`
		Servers int       `json:"servers"`
		State   StateCard `json:"state"`
	}{Schema: SchemaVersion, Now: now.UTC(), Servers: 1, State: StateCard{State: "down", Error: err.Error()}}
	if count != nil {
		doc.Servers = count()
	}
	b, _ := json.Marshal(doc)
	return append(b, '\n')
}
