package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/agones"
	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/state"
)

// sdkStandIn answers GET /gameserver with a GameServer in the state it is
// told (503 while the state is ""), as the SDK server would; it has no
// watch stream, so the watcher reads it by polling alone.
type sdkStandIn struct {
	srv   *httptest.Server
	state atomic.Pointer[string]
}

func newSDKStandIn(t *testing.T) *sdkStandIn {
	s := &sdkStandIn{}
	s.set("")
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := *s.state.Load()
		if r.URL.Path != "/gameserver" || st == "" {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, `{"object_meta":{"name":"gs","annotations":{"queryd.dev/name":"stand-in"}},"status":{"state":%q}}`, st)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sdkStandIn) set(st string) { s.state.Store(&st) }

// TestAgonesSource: the Agones GameServer as a source of the server's
// silence, with a real watcher polling a stand-in SDK server: silent
// (agones_starting) before the first read and while Scheduled; answering
// and fed while Ready, from the read that made it so, with the deadline
// the last read plus stale_after; silent (agones_stopped) once Shutdown;
// a new run when Ready again; silent (agones) once nothing is read for
// stale_after, and a new run when it is read again. The XDP program's
// From follows each. silent and from allocate nothing.
func TestAgonesSource(t *testing.T) {
	const after = time.Second
	sdk := newSDKStandIn(t)
	cfg := agones.NewConfig()
	cfg.SDK = strings.TrimPrefix(sdk.srv.URL, "http://")
	cfg.Interval, cfg.Timeout = config.Duration(100*time.Millisecond), config.Duration(200*time.Millisecond)
	store, err := state.NewStore(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := agones.New(cfg, agones.Options{
		Publish:    func(doc map[string]any) error { _, err := store.SetGameServer(doc); return err },
		StaleAfter: after,
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		Registry:   prometheus.NewRegistry(),
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s := &silence{start: start, sources: []source{agonesSource{w: w, after: after, start: start}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	check := func(what string, sl Silence, st State, r Reason, since time.Time, fed bool) {
		t.Helper()
		if sl.State != st || sl.Reason != r || !sl.Since.Equal(since) || sl.Fed != fed {
			t.Fatalf("%s: %+v, want state %s reason %q since %v fed %v", what, sl, st, r, since, fed)
		}
		want := sl.Since
		if !sl.Silent {
			want = sl.Deadline
		}
		if from := s.from(); !from.Equal(want) && sl.Silent { // from reads the clock again: only a silent one is fixed
			t.Fatalf("%s: From %v, want %v", what, from, want)
		}
	}
	until := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 5s: %+v", what, w.Status())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	class := func(c agones.Class) func() bool {
		return func() bool { got, _ := w.Class(); return got == c }
	}

	time.Sleep(300 * time.Millisecond) // polls refused: nothing read
	check("before the first read", s.at(time.Now()), StateSilent, ReasonAgonesStarting, start, false)

	sdk.set("Scheduled")
	until("Scheduled", class(agones.ClassStarting))
	_, since := w.Class()
	check("Scheduled", s.at(time.Now()), StateSilent, ReasonAgonesStarting, since, false)

	sdk.set("Ready")
	until("Ready", class(agones.ClassAnswering))
	now := time.Now()
	sl := s.at(now)
	run := w.AnsweringSince()
	check("Ready", sl, StateAnswering, "", run, true)
	if _, since := w.Class(); !run.Equal(since) {
		t.Errorf("the run began at %v, not at the read that made it Ready (%v)", run, since)
	}
	if d := w.LastRead().Add(after); sl.Deadline.Before(d.Add(-200*time.Millisecond)) || sl.Deadline.After(d) {
		t.Errorf("deadline %v, want the last read plus stale_after (%v)", sl.Deadline, d)
	}
	if n := testing.AllocsPerRun(100, func() { s.silent(time.Now()) }); n != 0 {
		t.Errorf("silent allocates %.0f times while answering", n)
	}
	if n := testing.AllocsPerRun(100, func() { s.from() }); n != 0 {
		t.Errorf("from allocates %.0f times while answering", n)
	}

	sdk.set("Shutdown")
	until("Shutdown", class(agones.ClassSilent))
	_, since = w.Class()
	check("Shutdown", s.at(time.Now()), StateSilent, ReasonAgonesStopped, since, true)
	if n := testing.AllocsPerRun(100, func() { s.silent(time.Now()); s.from() }); n != 0 {
		t.Errorf("silent and from allocate %.0f times while silent", n)
	}

	sdk.set("Ready")
	until("Ready again", class(agones.ClassAnswering))
	if again := w.AnsweringSince(); !again.After(run) {
		t.Errorf("Ready again: the run still begins at %v", again)
	}
	check("Ready again", s.at(time.Now()), StateAnswering, "", w.AnsweringSince(), true)

	sdk.set("") // the SDK server stops answering
	until("stale", func() bool { return s.silent(time.Now()) })
	last := w.LastRead()
	check("not read for stale_after", s.at(time.Now()), StateSilent, ReasonAgones, last.Add(after), true)
	if time.Since(last) < after {
		t.Errorf("silent %s after the last read, before stale_after", time.Since(last))
	}

	sdk.set("Ready")
	until("read again", func() bool { return !s.silent(time.Now()) })
	if run2 := w.AnsweringSince(); !run2.After(last) {
		t.Errorf("read again after a gap: the run begins at %v, before the gap's end", run2)
	}
	check("read again", s.at(time.Now()), StateAnswering, "", w.AnsweringSince(), true)
}
