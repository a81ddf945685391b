package agones

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queryd/queryd/state"
)

// standIn is an HTTP server in the SDK server's place: watch writes the
// watch stream, get answers GET /gameserver (404 when nil, so that only
// the stream brings GameServers).
type standIn struct {
	srv     *httptest.Server
	watch   func(w http.ResponseWriter, flush func() bool, r *http.Request)
	get     func(w http.ResponseWriter)
	streams atomic.Int32 // watch streams opened
	written atomic.Int64 // bytes of watch streams written
}

func newStandIn(t *testing.T) *standIn {
	s := &standIn{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /watch/gameserver", func(w http.ResponseWriter, r *http.Request) {
		s.streams.Add(1)
		rc := http.NewResponseController(w)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		s.watch(&countingWriter{w, &s.written}, func() bool { return rc.Flush() == nil && r.Context().Err() == nil }, r)
	})
	mux.HandleFunc("GET /gameserver", func(w http.ResponseWriter, r *http.Request) {
		if s.get == nil {
			http.NotFound(w, r)
			return
		}
		s.get(w)
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// addr is the stand-in's address as [agones] sdk names it.
func (s *standIn) addr() string { return strings.TrimPrefix(s.srv.URL, "http://") }

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// gsLine is a watch line of a GameServer in state st named name.
func gsLine(st, name string) string {
	return fmt.Sprintf(`{"result":{"object_meta":{"name":"gs","annotations":{"queryd.dev/name":%q},"labels":{}},`+
		`"status":{"state":%q,"counters":{"players":{"count":"2","capacity":"8"}},"lists":{}}}}`+"\n", name, st)
}

// hold keeps a stream open until the client goes.
func hold(r *http.Request) { <-r.Context().Done() }

// fastConfig is the defaults with a short timeout, for tests of what a
// timeout ends.
func fastConfig() *Config {
	c := NewConfig()
	c.Timeout = 300 * 1e6
	return c
}

// TestStandInRefusedLines: lines that are not JSON, JSON of another shape,
// an error from the SDK server and a GameServer with a bad number are each
// counted under their reason and change nothing: the last good GameServer
// stands, and reading stops counting as good (LastRead does not move).
func TestStandInRefusedLines(t *testing.T) {
	s := newStandIn(t)
	bad := []struct{ line, reason string }{
		{"not json at all", ReasonNotJSON},
		{`{"result": `, ReasonNotJSON},
		{"   ", ReasonNotJSON},
		{"", ReasonNotJSON},
		{`[1, 2]`, ReasonShape},
		{`{"result": 5}`, ReasonShape},
		{`{"result": null}`, ReasonShape},
		{`{"result": {"object_meta": {}}}`, ReasonShape},
		{`{"result": {"object_meta": {"annotations": {"queryd.dev/name": 7}}, "status": {"state": "Ready"}}}`, ReasonShape},
		{`{"result": {"status": {"state": "Ready", "counters": {"players": {"count": "many"}}}}}`, ReasonShape},
		{`{"error": {"code": 14, "message": "transport is closing"}}`, ReasonError},
	}
	release := make(chan struct{})
	s.watch = func(w http.ResponseWriter, flush func() bool, r *http.Request) {
		fmt.Fprint(w, gsLine("Ready", "good"))
		flush()
		<-release
		for _, b := range bad {
			fmt.Fprint(w, b.line+"\n")
		}
		flush()
		hold(r)
	}
	h := watch(t, s.addr(), nil)
	// The state is applied before LastRead is set: wait for both.
	h.until(5*time.Second, "the good line", func(st Status, snap *state.Snapshot) bool {
		return snap.Name == "good" && !st.LastRead.IsZero()
	})
	good := h.w.LastRead()
	close(release)
	h.until(5*time.Second, "the bad lines counted", func(Status, *state.Snapshot) bool {
		return h.reads(SourceWatch, ReasonNotJSON)+h.reads(SourceWatch, ReasonShape)+h.reads(SourceWatch, ReasonError) == float64(len(bad))
	})
	want := map[string]float64{}
	for _, b := range bad {
		want[b.reason]++
	}
	for reason, n := range want {
		if got := h.reads(SourceWatch, reason); got != n {
			t.Errorf("reads{watch,%s} = %v, want %v", reason, got, n)
		}
	}
	st := h.w.Status()
	if snap := h.store.Snapshot(); snap.Name != "good" || len(snap.Players) != 2 || snap.MaxPlayers != 8 || st.Class != ClassAnswering {
		t.Errorf("the last good GameServer did not stand: %+v players %d max %d", st, len(snap.Players), snap.MaxPlayers)
	}
	if !st.LastRead.Equal(good) || !strings.Contains(st.LastError, "transport is closing") {
		t.Errorf("after bad lines: LastRead %v (the good line's %v), LastError %q", st.LastRead, good, st.LastError)
	}
	if n := h.reads(SourceWatch, OutcomeApplied); n != 1 {
		t.Errorf("reads{watch,applied} = %v, want 1", n)
	}
}

// TestStandInLongLine: a 10 MiB line is counted once and skipped as it
// comes (memory stays near MaxLine, not 10 MiB), and the good line after
// it is read on the same stream.
func TestStandInLongLine(t *testing.T) {
	s := newStandIn(t)
	const long = 10 << 20
	release := make(chan struct{})
	s.watch = func(w http.ResponseWriter, flush func() bool, r *http.Request) {
		fmt.Fprint(w, gsLine("Ready", "before"))
		flush()
		<-release
		chunk := bytes.Repeat([]byte(`{"x":"aaaaaaaaaaaaaaaaaaaaaaa`), 64<<10/29)
		for sent := 0; sent < long; sent += len(chunk) {
			w.Write(chunk)
		}
		fmt.Fprint(w, "\n"+gsLine("Allocated", "after"))
		flush()
		hold(r)
	}
	h := watch(t, s.addr(), nil)
	h.until(5*time.Second, "the first line", func(_ Status, snap *state.Snapshot) bool { return snap.Name == "before" })
	before := heapAlloc()
	var peak atomic.Uint64
	stop := sampleHeap(&peak)
	close(release)
	h.until(10*time.Second, "the line after the long one", func(st Status, snap *state.Snapshot) bool {
		return snap.Name == "after" && st.State == "Allocated"
	})
	stop()
	grew := int64(peak.Load()) - int64(before)
	t.Logf("a %d MiB line: the heap grew by at most %.1f MiB while it was read (MaxLine %d MiB)", long>>20, float64(grew)/(1<<20), MaxLine>>20)
	if grew > 6<<20 {
		t.Errorf("the heap grew by %d bytes while a %d-byte line was skipped: the line is held, not skipped", grew, long)
	}
	if n := h.reads(SourceWatch, ReasonTooLong); n != 1 {
		t.Errorf("reads{watch,too_long} = %v, want 1", n)
	}
	if n := s.streams.Load(); n != 1 {
		t.Errorf("%d streams opened: the long line should not end the stream", n)
	}
}

// TestStandInEndlessWhitespace: a stream of spaces that never ends a line
// is refused once past MaxLine, skipped with bounded memory, and dropped
// after [agones] timeout from the line's start (then opened again); the
// last good GameServer stands and LastRead stops moving.
func TestStandInEndlessWhitespace(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: hundreds of MiB of spaces: -short")
	}
	s := newStandIn(t)
	var first atomic.Bool
	s.watch = func(w http.ResponseWriter, flush func() bool, r *http.Request) {
		if !first.Swap(true) {
			fmt.Fprint(w, gsLine("Ready", "good"))
			flush()
		}
		spaces := bytes.Repeat([]byte(" "), 64<<10)
		for r.Context().Err() == nil {
			if _, err := w.Write(spaces); err != nil {
				return
			}
		}
	}
	h := watch(t, s.addr(), fastConfig())
	h.until(5*time.Second, "the good line", func(st Status, snap *state.Snapshot) bool {
		return snap.Name == "good" && !st.LastRead.IsZero()
	})
	good := h.w.LastRead()
	before := heapAlloc()
	var peak atomic.Uint64
	stop := sampleHeap(&peak)
	h.until(10*time.Second, "two streams dropped for a line that never ends", func(Status, *state.Snapshot) bool {
		return h.reads(SourceWatch, ReasonTimeout) >= 2
	})
	stop()
	grew := int64(peak.Load()) - int64(before)
	t.Logf("%d MiB of spaces on %d streams: the heap grew by at most %.1f MiB", s.written.Load()>>20, s.streams.Load(), float64(grew)/(1<<20))
	if grew > 8<<20 {
		t.Errorf("the heap grew by %d bytes while %d bytes of spaces were skipped", grew, s.written.Load())
	}
	if h.reads(SourceWatch, ReasonTooLong) < 1 || h.metric("queryd_agones_reconnects_total") < 1 {
		t.Errorf("too_long %v, reconnects %v: want both counted", h.reads(SourceWatch, ReasonTooLong), h.metric("queryd_agones_reconnects_total"))
	}
	st := h.w.Status()
	if h.store.Snapshot().Name != "good" || st.Class != ClassAnswering || !st.LastRead.Equal(good) {
		t.Errorf("the last good GameServer did not stand, or reading spaces counted as reading: %+v", st)
	}
}

// TestStandInStalledLine: a line that begins and stops is dropped after
// [agones] timeout, counted as a timeout, and the stream opened again.
func TestStandInStalledLine(t *testing.T) {
	s := newStandIn(t)
	s.watch = func(w http.ResponseWriter, flush func() bool, r *http.Request) {
		fmt.Fprint(w, gsLine("Ready", "good")+`{"result": {"status"`)
		flush()
		hold(r)
	}
	h := watch(t, s.addr(), fastConfig())
	begin := time.Now()
	h.until(5*time.Second, "a stalled line dropped", func(Status, *state.Snapshot) bool {
		return h.reads(SourceWatch, ReasonTimeout) >= 1
	})
	if d := time.Since(begin); d < 250*time.Millisecond {
		t.Errorf("a stalled line dropped after %s, before the timeout (300ms)", d)
	}
	h.until(5*time.Second, "the stream opened again", func(Status, *state.Snapshot) bool { return s.streams.Load() >= 2 })
	if h.store.Snapshot().Name != "good" {
		t.Errorf("the good line was not applied")
	}
}

// TestStandInBackoff: a stream that ends right after its first line is
// opened again with a back-off that grows (not a tight loop), and
// Watching says when it is open.
func TestStandInBackoff(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: 3s of streams opened again: -short")
	}
	s := newStandIn(t)
	s.watch = func(w http.ResponseWriter, flush func() bool, r *http.Request) {
		fmt.Fprint(w, gsLine("Ready", "good"))
	}
	h := watch(t, s.addr(), nil)
	time.Sleep(3 * time.Second)
	n := s.streams.Load()
	// Waits of 50-100, 100-200, 200-400, 400-800ms, then 1-2s: 4 to 8
	// streams in 3s, and not many more on a loaded machine.
	if n < 3 || n > 10 {
		t.Errorf("%d streams opened in 3s: want 3 to 10 (back-off from %s doubling to %s)", n, minBackoff, maxBackoff)
	}
	if got := h.metric("queryd_agones_reconnects_total"); got != float64(n-1) && got != float64(n) {
		t.Errorf("reconnects %v for %d streams", got, n)
	}
	if h.reads(SourceWatch, ReasonFailed) < float64(n-1) {
		t.Errorf("streams ended not counted as failed reads: %v of %d", h.reads(SourceWatch, ReasonFailed), n)
	}
}

// TestStandInPollOnly: with a watch stream that answers 500, the
// GameServer still comes, from GET /gameserver every interval.
func TestStandInPollOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: polls for 2s: -short")
	}
	s := newStandIn(t)
	s.watch = func(w http.ResponseWriter, flush func() bool, r *http.Request) {}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /watch/gameserver", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no stream here", http.StatusInternalServerError)
	})
	mux.HandleFunc("GET /gameserver", func(w http.ResponseWriter, r *http.Request) {
		line := gsLine("Reserved", "polled")
		fmt.Fprint(w, line[len(`{"result":`):len(line)-2]) // the GameServer alone
	})
	s.srv.Config.Handler = mux
	h := watch(t, s.addr(), nil)
	h.until(5*time.Second, "the polled GameServer", func(st Status, snap *state.Snapshot) bool {
		return snap.Name == "polled" && st.Class == ClassAnswering && st.State == "Reserved" && !st.Watching
	})
	if h.reads(SourceWatch, ReasonFailed) < 1 || h.reads(SourceGet, OutcomeApplied) != 1 {
		t.Errorf("reads: watch failed %v, get applied %v", h.reads(SourceWatch, ReasonFailed), h.reads(SourceGet, OutcomeApplied))
	}
	last := h.w.LastRead()
	time.Sleep(3 * h.w.interval)
	if !h.w.LastRead().After(last) || h.reads(SourceGet, OutcomeSame) < 1 {
		t.Errorf("an unchanged GET answer does not count as a read: LastRead %v, same %v", h.w.LastRead(), h.reads(SourceGet, OutcomeSame))
	}
}

// heapAlloc returns the bytes of allocated heap objects now.
func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// sampleHeap records the largest HeapAlloc seen every 5ms into peak,
// until the function it returns is called.
func sampleHeap(peak *atomic.Uint64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); <-finished }
}
