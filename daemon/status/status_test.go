package status_test

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/queryd/queryd/agones"
	"github.com/queryd/queryd/daemon/status"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/sleep"
	"github.com/queryd/queryd/state"
	"github.com/queryd/queryd/upstream"
)

// fakeDaemon is a Source with metrics of the daemon's names that the test
// moves by hand.
type fakeDaemon struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	bytesIn  *prometheus.CounterVec
	bytesOut *prometheus.CounterVec
	sessions prometheus.Gauge
	opened   prometheus.Counter
	evicted  prometheus.Counter
	packets  *prometheus.CounterVec
	beats    *prometheus.CounterVec
	beatErrs prometheus.Counter
	getinfo  prometheus.Counter
	store    *state.Store
	lastFed  time.Time
	stale    bool
	drains   [][]responder.SourceCount // handed out one per Sample
}

func newFakeDaemon(t testing.TB) *fakeDaemon {
	t.Helper()
	f := &fakeDaemon{reg: prometheus.NewRegistry()}
	f.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "queryd_requests_total"}, []string{"protocol", "outcome"})
	f.bytesIn = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "queryd_received_bytes_total"}, []string{"protocol"})
	f.bytesOut = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "queryd_sent_bytes_total"}, []string{"protocol"})
	f.sessions = prometheus.NewGauge(prometheus.GaugeOpts{Name: "queryd_relay_sessions"})
	f.opened = prometheus.NewCounter(prometheus.CounterOpts{Name: "queryd_relay_sessions_opened_total"})
	f.evicted = prometheus.NewCounter(prometheus.CounterOpts{Name: "queryd_relay_sessions_evicted_total"})
	f.packets = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "queryd_relay_packets_total"}, []string{"direction"})
	f.beats = prometheus.NewCounterVec(prometheus.CounterOpts{Name: fakeHeartbeats.Sent}, []string{"kind"})
	f.beatErrs = prometheus.NewCounter(prometheus.CounterOpts{Name: fakeHeartbeats.Errors})
	f.getinfo = prometheus.NewCounter(prometheus.CounterOpts{Name: fakeHeartbeats.Getinfo})
	f.reg.MustRegister(f.requests, f.bytesIn, f.bytesOut, f.sessions, f.opened, f.evicted, f.packets, f.beats, f.beatErrs, f.getinfo)
	for _, p := range []string{"a2s", "quake3", "unknown"} {
		for _, o := range status.Outcomes {
			f.requests.WithLabelValues(p, o)
		}
		f.bytesIn.WithLabelValues(p)
		f.bytesOut.WithLabelValues(p)
	}
	var err error
	f.store, err = state.NewStore(stateDoc(t, `{"name":"Test <Server>","map":"arena","max_players":8}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// stateDoc decodes a state document as the feed does (numbers as json.Number).
func stateDoc(t testing.TB, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// fakeHeartbeats names the fake's master heartbeats' metrics, as a module
// that sends heartbeats names them (quake3's names: the page reads whichever
// it is given).
var fakeHeartbeats = module.HeartbeatMetrics{
	Sent:    "queryd_quake3_heartbeats_total",
	Errors:  "queryd_quake3_heartbeat_errors_total",
	Getinfo: "queryd_quake3_master_getinfo_total",
}

func (f *fakeDaemon) source() status.Source {
	return status.Source{
		Snapshot:     f.store.Snapshot,
		Protocols:    func() []string { return []string{"quake3", "a2s"} },
		Listen:       func() []netip.AddrPort { return []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:27015")} },
		FeedConns:    func() int { return 2 },
		LastFed:      func() time.Time { return f.lastFed },
		Silence:      f.silence,
		StaleAfter:   60 * time.Second,
		Gatherer:     f.reg,
		Heartbeats:   fakeHeartbeats,
		UnprovenUse:  func(time.Time) float64 { return 0.25 },
		DrainSources: f.drain,
		Build:        status.Build{Version: "v-test"},
	}
}

// silence is the fake's silence: with stale set, silent since the feed's
// last message plus 60 s for the feed alone.
func (f *fakeDaemon) silence(time.Time) status.Silence {
	if !f.stale {
		return status.Silence{}
	}
	return status.Silence{Silent: true, Reasons: []string{"feed"}, Feed: true, Since: f.lastFed.Add(60 * time.Second)}
}

func (f *fakeDaemon) drain(dst []responder.SourceCount) []responder.SourceCount {
	if len(f.drains) == 0 {
		return dst
	}
	d := f.drains[0]
	f.drains = f.drains[1:]
	return append(dst, d...)
}

// getJSON serves /status.json of s and decodes it into v.
func getJSON(t *testing.T, s *status.Sampler, v any) {
	t.Helper()
	mux := http.NewServeMux()
	s.Register(mux)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1:9273/status.json", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET /status.json: %d %q\n%s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatal(err)
	}
}

func source(p string, n uint64, outcomes map[int]uint64) responder.SourceCount {
	sc := responder.SourceCount{Source: netip.MustParsePrefix(p), Requests: n}
	for o, c := range outcomes {
		sc.Outcomes[o] = c
	}
	return sc
}

// /status.json reports the state, the feed, per-second rates from the
// counters' growth between samples, relay, heartbeats and the busiest
// sources summed over receive loops.
func TestStatusJSON(t *testing.T) {
	f := newFakeDaemon(t)
	v, err := f.store.Replace(stateDoc(t, `{"name":"Test <Server>","map":"arena","max_players":8,
		"players":{"3":{"name":"Zoë <b>","score":7,"ping":42,"time":90}}}`))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.lastFed = t0.Add(-90 * time.Second)
	f.stale = true
	// The same source from two loops, another from one, in the first second.
	f.drains = [][]responder.SourceCount{{
		source("127.0.0.2/32", 30, map[int]uint64{0: 25, 1: 5}),
		source("2001:db8::/64", 10, map[int]uint64{4: 10}),
		source("127.0.0.2/32", 20, map[int]uint64{0: 20}),
	}}
	s := status.New(f.source(), nil)
	s.Sample(t0)
	f.requests.WithLabelValues("a2s", "answered").Add(100)
	f.requests.WithLabelValues("a2s", "challenged").Add(10)
	f.requests.WithLabelValues("a2s", "denied").Add(6)
	f.bytesOut.WithLabelValues("a2s").Add(2000)
	f.opened.Add(4)
	f.packets.WithLabelValues("upstream").Add(50)
	f.sessions.Set(3)
	f.beats.WithLabelValues("heartbeat").Inc()
	f.getinfo.Inc()
	s.Sample(t0.Add(2 * time.Second)) // 2 s later: rates are halves

	var r status.Report
	getJSON(t, s, &r)
	if r.Schema != 1 || len(r.Traffic.Times) != 2 || r.Traffic.Times[1] != t0.Unix()+2 {
		t.Fatalf("schema %d, times %v", r.Schema, r.Traffic.Times)
	}
	sv := r.Server
	if sv.Name != "Test <Server>" || sv.Map != "arena" || sv.MaxPlayers != 8 || sv.Players != 1 ||
		len(sv.PlayerList) != 1 || sv.PlayerList[0].Name != "Zoë <b>" || sv.PlayerList[0].Score != 7 || sv.PlayerList[0].Ping != 42 {
		t.Errorf("server %+v", sv)
	}
	if !slices.Equal(sv.Protocols, []string{"quake3", "a2s"}) || !slices.Equal(sv.Listen, []string{"127.0.0.1:27015"}) || sv.Build.Version != "v-test" {
		t.Errorf("protocols %v listen %v build %+v", sv.Protocols, sv.Listen, sv.Build)
	}
	fd := r.Feed
	if fd.Connections != 2 || fd.StateVersion != v || !fd.Stale || fd.StaleAfter != 60 || fd.SilentSince == nil ||
		!fd.SilentSince.Equal(t0.Add(-30*time.Second)) || fd.LastMessage == nil || !fd.LastMessage.Equal(f.lastFed) {
		t.Errorf("feed %+v", fd)
	}
	var names []string
	for _, p := range r.Traffic.Protocols {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"quake3", "a2s", "unknown"}) {
		t.Fatalf("traffic rows %v, want demux order then unknown", names)
	}
	a2s := r.Traffic.Protocols[1]
	for series, want := range map[string][]float64{"answered": {0, 50}, "challenged": {0, 5}, "denied": {0, 3}, "bytes_out": {0, 1000}, "ignored": {0, 0}} {
		if !slices.Equal(a2s.PerS[series], want) {
			t.Errorf("a2s %s per second %v, want %v", series, a2s.PerS[series], want)
		}
	}
	if a2s.Totals["answered"] != 100 || !slices.Equal(r.Traffic.UnprovenUse, []float64{0.25, 0.25}) {
		t.Errorf("a2s totals %v, unproven %v", a2s.Totals, r.Traffic.UnprovenUse)
	}
	if r.Relay == nil || !slices.Equal(r.Relay.Sessions, []float64{0, 3}) || !slices.Equal(r.Relay.PerS["opened"], []float64{0, 2}) ||
		!slices.Equal(r.Relay.PerS["upstream"], []float64{0, 25}) || r.Relay.Totals["upstream"] != 50 {
		t.Errorf("relay %+v", r.Relay)
	}
	hb := r.Heartbeats
	if hb == nil || hb.Heartbeats != 1 || hb.MasterGetinfo != 1 || hb.LastHeartbeat == nil || !hb.LastHeartbeat.Equal(t0.Add(2*time.Second)) {
		t.Errorf("heartbeats %+v", hb)
	}
	want := []status.SourceReport{
		{Source: "127.0.0.2", Requests: 50, Outcomes: map[string]uint64{"answered": 45, "challenged": 5}},
		{Source: "2001:db8::/64", Requests: 10, Outcomes: map[string]uint64{"rate_limited": 10}},
	}
	got := r.Busiest.Sources
	if r.Busiest.Window != 60 || len(got) != len(want) {
		t.Fatalf("busiest %+v", r.Busiest)
	}
	for i := range want {
		if got[i].Source != want[i].Source || got[i].Requests != want[i].Requests || !mapsEqual(got[i].Outcomes, want[i].Outcomes) {
			t.Errorf("busiest %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// The silent object is the daemon's silence value, every cause it names
// with the first first; the upstream card is the poller's status, with
// the answer's age and round trip; both are null or empty when they do
// not apply.
func TestStatusSilentAndUpstream(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f := newFakeDaemon(t)
	f.lastFed = t0.Add(-65 * time.Second)
	src := f.source()
	var sl status.Silence
	src.Silence = func(time.Time) status.Silence { return sl }
	var up upstream.Status
	src.Upstream = func() upstream.Status { return up }
	s := status.New(src, nil)

	sl = status.Silence{Deadline: t0.Add(50 * time.Second)}
	up = upstream.Status{Protocol: "a2s", Address: "127.0.0.1:27016", LastAnswer: t0.Add(-10 * time.Second), RTT: 1234 * time.Microsecond, Partial: "A2S_RULES: timeout"}
	s.Sample(t0)
	var r status.Report
	getJSON(t, s, &r)
	if r.Silent.Silent || r.Silent.Reason != nil || len(r.Silent.Reasons) != 0 || r.Silent.Since != nil ||
		r.Silent.Deadline == nil || !r.Silent.Deadline.Equal(t0.Add(50*time.Second)) {
		t.Errorf("answering: silent %+v", r.Silent)
	}
	u := r.Upstream
	if u == nil || u.Protocol != "a2s" || u.Address != "127.0.0.1:27016" || u.LastAnswer == nil || *u.AnswerAge != 10 ||
		*u.RoundTrip != 1.2 || u.Partial != "A2S_RULES: timeout" || u.LastError != "" || u.Stale || u.StaleAfter != 60 {
		t.Errorf("answering: upstream %+v", u)
	}

	sl = status.Silence{Silent: true, Reasons: []string{"upstream", "feed"}, Feed: true, Upstream: true, Since: t0.Add(-5 * time.Second)}
	up.LastError, up.Partial = "read udp: i/o timeout", ""
	s.Sample(t0.Add(time.Second))
	r = status.Report{}
	getJSON(t, s, &r)
	if !r.Silent.Silent || r.Silent.Reason == nil || *r.Silent.Reason != "upstream" || !slices.Equal(r.Silent.Reasons, []string{"upstream", "feed"}) ||
		r.Silent.Since == nil || !r.Silent.Since.Equal(t0.Add(-5*time.Second)) || r.Silent.Deadline != nil {
		t.Errorf("silent: %+v", r.Silent)
	}
	if u := r.Upstream; u == nil || !u.Stale || u.LastError != "read udp: i/o timeout" || !r.Feed.Stale {
		t.Errorf("silent: upstream %+v, feed stale %v", u, r.Feed.Stale)
	}

	up = upstream.Status{Protocol: "quake3", Address: "127.0.0.1:27960", LastError: "no answer"}
	sl = status.Silence{Silent: true, Reasons: []string{"upstream_unanswered"}, Upstream: true, Since: t0}
	s.Sample(t0.Add(2 * time.Second))
	r = status.Report{}
	getJSON(t, s, &r)
	if u := r.Upstream; u == nil || u.LastAnswer != nil || u.AnswerAge != nil || u.RoundTrip != nil || !u.Stale || r.Feed.Stale {
		t.Errorf("never answered: upstream %+v, feed %+v", u, r.Feed)
	}

	src.Upstream = nil
	s = status.New(src, nil)
	s.Sample(t0)
	var doc map[string]any
	getJSON(t, s, &doc)
	if v, ok := doc["upstream"]; !ok || v != nil {
		t.Errorf("without [upstream]: \"upstream\": %v (present %v), want null", v, ok)
	}
}

func mapsEqual(a, b map[string]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// The rings keep the last status.Samples samples, and the busiest sources
// the last status.BusiestWindow seconds: memory does not grow with time.
func TestStatusWindows(t *testing.T) {
	f := newFakeDaemon(t)
	t0 := time.Unix(1_000_000, 0)
	const n = status.Samples + 25
	for i := 0; i < n; i++ {
		// Each second a new source, sending i requests.
		f.drains = append(f.drains, []responder.SourceCount{source(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}).String()+"/32", uint64(i+1), map[int]uint64{0: uint64(i + 1)})})
	}
	s := status.New(f.source(), nil)
	for i := 0; i < n; i++ {
		f.requests.WithLabelValues("a2s", "answered").Add(float64(i))
		s.Sample(t0.Add(time.Duration(i) * time.Second))
	}
	r := s.Report(t0.Add(n * time.Second))
	if len(r.Traffic.Times) != status.Samples || r.Traffic.Times[0] != t0.Unix()+25 {
		t.Fatalf("%d samples from %d, want %d from %d", len(r.Traffic.Times), r.Traffic.Times[0], status.Samples, t0.Unix()+25)
	}
	a := r.Traffic.Protocols[1].PerS["answered"]
	if len(a) != status.Samples || a[0] != 25 || a[len(a)-1] != n-1 {
		t.Fatalf("answered: %d values from %v to %v", len(a), a[0], a[len(a)-1])
	}
	src := r.Busiest.Sources
	if len(src) != status.BusiestShown || src[0].Requests != n || src[0].Source != "10.0.0.204" {
		t.Fatalf("busiest: %+v", src)
	}
	for _, sc := range src {
		if sc.Requests <= n-status.BusiestWindow {
			t.Errorf("%s (%d requests) is older than the window", sc.Source, sc.Requests)
		}
	}
}

// The page and its files are served with their types; only GET is served.
// (The Host check and the security headers are the admin listener's:
// package daemon's TestAdminGuard.)
func TestStatusRoutes(t *testing.T) {
	s := status.New(newFakeDaemon(t).source(), nil)
	mux := http.NewServeMux()
	s.Register(mux)
	for _, c := range []struct {
		method, url string
		code        int
		ctype       string
	}{
		{"GET", "/", 200, "text/html; charset=utf-8"},
		{"GET", "/status.js", 200, "text/javascript; charset=utf-8"},
		{"GET", "/status.css", 200, "text/css; charset=utf-8"},
		{"GET", "/status.json", 200, "application/json"},
		{"POST", "/status.json", 405, ""},
		{"GET", "/nothing", 404, ""},
	} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(c.method, "http://127.0.0.1:9273"+c.url, nil))
		if rec.Code != c.code {
			t.Errorf("%s %s: %d, want %d", c.method, c.url, rec.Code, c.code)
			continue
		}
		if c.ctype != "" && rec.Header().Get("Content-Type") != c.ctype {
			t.Errorf("%s: Content-Type %q, want %q", c.url, rec.Header().Get("Content-Type"), c.ctype)
		}
	}
}

// The page ships no inline script or style and loads nothing from another
// origin; the script never writes HTML.
func TestPageSourceStrict(t *testing.T) {
	html, err := os.ReadFile("page/index.html")
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile("page/status.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{`<script>`, `<script[^>]*>[^<]`, `<style`, `\sstyle=`, `\son[a-z]+=`, `(src|href)="(https?:)?//`} {
		if m := regexp.MustCompile(re).Find(html); m != nil {
			t.Errorf("index.html has %q (%s)", m, re)
		}
	}
	code := strings.ReplaceAll(string(js), `"http://www.w3.org/2000/svg"`, "SVG_NAMESPACE") // a name, not a request
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "http://", "https://", "//cdn"} {
		if strings.Contains(code, bad) {
			t.Errorf("status.js uses %s", bad)
		}
	}
}

// docFields are the field paths of docs/status.md's table.
func docFields(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/status.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_.\\[\\]<>]+)` \\|").FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	sort.Strings(out)
	return out
}

// jsonFields lists the field paths of a decoded JSON value (true: its value
// is an object, whose fields document it): array items as "[]", the keys of
// the series and outcome maps as "<series>" and "<outcome>".
func jsonFields(prefix string, v any, into map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			name := k
			switch {
			case strings.HasSuffix(prefix, ".per_s") || strings.HasSuffix(prefix, ".totals"):
				name = "<series>"
			case strings.HasSuffix(prefix, ".outcomes") && strings.HasPrefix(prefix, "busiest"):
				name = "<outcome>"
			case prefix == "sleep.wakes":
				name = "<cause>"
			case prefix == "sleep.failures":
				name = "<reason>"
			}
			p := name
			if prefix != "" {
				p = prefix + "." + name
			}
			_, object := c.(map[string]any)
			into[p] = into[p] || object
			jsonFields(p, c, into)
		}
	case []any:
		for _, c := range x {
			jsonFields(prefix+"[]", c, into)
		}
	}
}

// TestStatusJSONSchema: the document has exactly the fields docs/status.md
// documents (with relay, heartbeats, players and sources present).
func TestStatusJSONSchema(t *testing.T) {
	f := newFakeDaemon(t)
	if _, err := f.store.Replace(stateDoc(t, `{"players":{"1":{"name":"a"}}}`)); err != nil {
		t.Fatal(err)
	}
	f.drains = [][]responder.SourceCount{{source("127.0.0.2/32", 1, map[int]uint64{0: 1})}}
	f.lastFed, f.stale = time.Now().Add(-time.Hour), true
	src := f.source()
	src.Upstream = func() upstream.Status {
		return upstream.Status{Protocol: "a2s", Address: "127.0.0.1:27016", LastAnswer: time.Now().Add(-time.Minute), RTT: time.Millisecond}
	}
	src.Agones = func() agones.Status {
		now := time.Now()
		return agones.Status{SDK: "localhost:9358", State: "Ready", Class: agones.ClassAnswering, ClassSince: now.Add(-time.Minute),
			AnsweringSince: now.Add(-time.Minute), LastRead: now, Watching: true}
	}
	src.Sleep = func() sleep.Status {
		now := time.Now()
		return sleep.Status{Phase: sleep.Asleep, PhaseSince: now, AsleepSince: now, After: time.Minute,
			Wakes: map[string]uint64{"join": 2, "feed": 1}, Failures: map[string]uint64{sleep.FailStart: 1},
			WakesPerHour: 6, WakesLastHour: 3, LastWake: now, LastWakeTook: time.Second,
			LastFailure: sleep.Failure{Reason: sleep.FailStart, At: now, Err: "exit status 1", Output: "no such unit"}}
	}
	s := status.New(src, nil)
	s.Sample(time.Now())
	var doc map[string]any
	getJSON(t, s, &doc)
	got := map[string]bool{}
	jsonFields("", doc, got)
	var have []string
	for k := range got {
		have = append(have, k)
	}
	sort.Strings(have)
	documented := docFields(t)
	for _, k := range have {
		if !got[k] && !slices.Contains(documented, k) {
			t.Errorf("/status.json has %s: not in docs/status.md", k)
		}
	}
	for _, k := range documented {
		if _, ok := got[k]; !ok {
			t.Errorf("docs/status.md documents %s: not in /status.json", k)
		}
	}
	if t.Failed() {
		t.Logf("fields: %s", strings.Join(have, " "))
	}
}

// A collector that fails does not blank the page: the sampler shows what
// the registry could gather.
func TestStatusPartialGather(t *testing.T) {
	f := newFakeDaemon(t)
	f.reg.MustRegister(failingCollector{prometheus.NewDesc("queryd_failing", "fails", nil, nil)})
	if _, err := f.reg.Gather(); err == nil {
		t.Fatal("the registry gathers without an error")
	}
	s := status.New(f.source(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	t0 := time.Unix(1_000_000, 0)
	s.Sample(t0)
	f.requests.WithLabelValues("a2s", "answered").Add(7)
	s.Sample(t0.Add(time.Second))
	r := s.Report(t0.Add(time.Second))
	if len(r.Traffic.Protocols) != 3 || !slices.Equal(r.Traffic.Protocols[1].PerS["answered"], []float64{0, 7}) {
		t.Fatalf("traffic %+v", r.Traffic.Protocols)
	}
}

// TestStatusHeartbeatsNamed: the heartbeats card reads the metrics the
// source names (a module's) and only those: without names, no card, however
// the registry's metrics are called; with another module's names, its card.
func TestStatusHeartbeatsNamed(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	card := func(hb module.HeartbeatMetrics, sent string) *status.HeartbeatCard {
		f := newFakeDaemon(t)
		other := prometheus.NewCounterVec(prometheus.CounterOpts{Name: sent}, []string{"kind"})
		if sent != fakeHeartbeats.Sent {
			f.reg.MustRegister(other)
		}
		src := f.source()
		src.Heartbeats = hb
		s := status.New(src, nil)
		s.Sample(t0)
		f.beats.WithLabelValues("heartbeat").Add(3)
		other.WithLabelValues("heartbeat").Add(5)
		s.Sample(t0.Add(time.Second))
		return s.Report(t0.Add(time.Second)).Heartbeats
	}
	if hb := card(module.HeartbeatMetrics{}, fakeHeartbeats.Sent); hb != nil {
		t.Errorf("no heartbeat metrics named: card %+v, want none", hb)
	}
	if hb := card(fakeHeartbeats, fakeHeartbeats.Sent); hb == nil || hb.Heartbeats != 3 {
		t.Errorf("the fake's names: card %+v, want 3 heartbeats", hb)
	}
	if hb := card(module.HeartbeatMetrics{Sent: "queryd_other_heartbeats_total"}, "queryd_other_heartbeats_total"); hb == nil || hb.Heartbeats != 5 {
		t.Errorf("another module's names: card %+v, want its 5 heartbeats", hb)
	}
	if got := status.Metrics(module.HeartbeatMetrics{}); slices.Contains(got, fakeHeartbeats.Sent) {
		t.Errorf("Metrics without heartbeats lists %v", got)
	}
	if got := status.Metrics(fakeHeartbeats); !slices.Contains(got, fakeHeartbeats.Sent) || !slices.Contains(got, fakeHeartbeats.Getinfo) {
		t.Errorf("Metrics with heartbeats lists %v", got)
	}
}

// failingCollector fails every collection.
type failingCollector struct{ desc *prometheus.Desc }

func (c failingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c failingCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.NewInvalidMetric(c.desc, errors.New("a collector failed"))
}

// BenchmarkSampleAndReport measures the page's cost once a second: one
// sample (gathering a registry with the Go and process collectors, as the
// daemon's) and one /status.json.
func BenchmarkSampleAndReport(b *testing.B) {
	f := newFakeDaemon(b)
	f.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s := status.New(f.source(), nil)
	mux := http.NewServeMux()
	s.Register(mux)
	now := time.Unix(1_000_000, 0)
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Second)
		s.Sample(now)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1:9273/status.json", nil))
	}
}
