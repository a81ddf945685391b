package main

// worker is one source socket of the load generator: it keeps up to
// inflight requests outstanding, matches replies to requests in order
// (loopback keeps a socket pair's datagrams in order), and records what
// happened in its own counters (read only after it has finished). The
// socket I/O is in worker_linux.go.
type worker struct {
	cfg     *loadConfig
	p       *proto
	session [4]byte
	io      *batchIO

	tok    uint32
	hasTok bool
	open   bool  // the server answered a token request without a challenge
	tokAt  int64 // when tok arrived (ns since start)
	asking int   // token requests in flight

	// Requests in flight, oldest first: send time and whether it asked for a token.
	fifoT   []int64
	fifoAsk []bool
	head, n int

	req, ask []byte // the request bytes, rebuilt when the token changes
	quota    int64  // token-bearing requests left to send (-count); <0: no limit
	kinds    []bool // per message of the send batch: a token request

	warmAt, stopAt int64 // measurement window (ns since start)
	st             stats
}

// stats are one worker's counts inside the measurement window.
type stats struct {
	sent       int64 // token-bearing requests sent
	asks       int64 // token requests sent
	answered   int64 // answers completed (last datagram received)
	challenges int64 // challenge replies
	lost       int64 // requests given up after -timeout
	stray      int64 // replies with no request in flight
	dgramsIn   int64
	bytesIn    int64
	bytesOut   int64
	last       int64 // when the last answer in the window came (ns since start)
	lat        hist
}

func (s *stats) add(o *stats) {
	s.sent += o.sent
	s.asks += o.asks
	s.answered += o.answered
	s.challenges += o.challenges
	s.lost += o.lost
	s.stray += o.stray
	s.dgramsIn += o.dgramsIn
	s.bytesIn += o.bytesIn
	s.bytesOut += o.bytesOut
	s.last = max(s.last, o.last)
	s.lat.merge(&o.lat)
}

// dummyToken is what token-bearing requests carry when the server hands out
// no tokens (the fixed-reply servers): same bytes on the wire as with queryd.
const dummyToken = 0x5EED5EED

func newWorker(cfg *loadConfig, p *proto, i int, quota int64) *worker {
	w := &worker{
		cfg:     cfg,
		p:       p,
		session: [4]byte{0x01, 0x02, byte(i >> 8 & 0x0F), byte(i & 0x0F)},
		fifoT:   make([]int64, cfg.inflight),
		fifoAsk: make([]bool, cfg.inflight),
		req:     make([]byte, 0, 128),
		ask:     make([]byte, 0, 128),
		kinds:   make([]bool, cfg.batch),
		quota:   quota,
		warmAt:  int64(cfg.warmup),
		stopAt:  int64(cfg.warmup + cfg.duration),
	}
	w.ask = p.ask(w.ask[:0], w.session)
	w.setToken(dummyToken, 0, false)
	return w
}

func (w *worker) setToken(tok uint32, now int64, has bool) {
	w.tok, w.tokAt, w.hasTok = tok, now, has
	w.req = w.p.request(w.req[:0], tok, w.session)
}

func (w *worker) inWindow(now int64) bool { return now >= w.warmAt && now < w.stopAt }

// needsToken reports whether the next request must ask for a token: none
// yet, or the one held is older than -refresh (tokens live 30-60 s; GameSpy4
// ignores a stale token silently, so waiting for a challenge would stall).
func (w *worker) needsToken(now int64) bool {
	if !w.p.challenged || w.open || w.asking > 0 {
		return false
	}
	return !w.hasTok || now-w.tokAt > int64(w.cfg.refresh)
}

// want is how many requests should be in flight: one until the first
// token has come back, then -inflight.
func (w *worker) want() int {
	if w.p.challenged && !w.open && !w.hasTok {
		return 1
	}
	return w.cfg.inflight
}

func (w *worker) push(t int64, ask bool) {
	i := (w.head + w.n) % len(w.fifoT)
	w.fifoT[i], w.fifoAsk[i] = t, ask
	w.n++
}

func (w *worker) pop() (int64, bool) {
	t, ask := w.fifoT[w.head], w.fifoAsk[w.head]
	w.head = (w.head + 1) % len(w.fifoT)
	w.n--
	if ask {
		w.asking--
	}
	return t, ask
}

// onReply handles one reply datagram received at now.
func (w *worker) onReply(p []byte, now int64) {
	win := w.inWindow(now)
	if win {
		w.st.dgramsIn++
		w.st.bytesIn += int64(len(p))
	}
	kind, tok := classify(w.p, p, w.session)
	if kind == replyFragment {
		return
	}
	if w.n == 0 {
		if win {
			w.st.stray++
		}
		return
	}
	sent, _ := w.pop()
	if kind == replyChallenge {
		w.setToken(tok, now, true)
		if win {
			w.st.challenges++
		}
		return
	}
	if w.p.challenged && !w.hasTok && !w.open {
		w.open = true // no challenge round: the fixed-reply servers
		w.setToken(dummyToken, now, true)
	}
	if win && sent >= w.warmAt {
		w.st.answered++
		w.st.lat.record(now - sent)
		w.st.last = now
	}
}

// expire gives up the requests older than -timeout. A lost token-bearing
// request may mean the token went stale (GameSpy4 answers nothing then), so
// the next request asks for a new one.
func (w *worker) expire(now int64) {
	lostData := false
	for w.n > 0 && now-w.fifoT[w.head] > int64(w.cfg.timeout) {
		_, ask := w.pop()
		lostData = lostData || !ask
		if w.inWindow(now) {
			w.st.lost++
		}
	}
	if lostData && w.p.challenged && !w.open {
		w.hasTok = false
	}
}

// nextBatch decides the requests of the next send batch (up to the batch
// size), recording in w.kinds which ask for a token, and returns how many.
// The caller sends them and then calls sent.
func (w *worker) nextBatch(now int64) int {
	k := 0
	for w.n+k < w.want() && k < len(w.kinds) {
		ask := w.needsToken(now) && !w.pendingAsk(k)
		if !ask {
			if w.p.challenged && !w.open && !w.hasTok {
				break // wait for the token
			}
			if w.quota == 0 {
				break
			}
		}
		if !ask && w.quota > 0 {
			w.quota--
		}
		w.kinds[k] = ask
		k++
	}
	return k
}

// pendingAsk reports whether the first k messages of the batch hold a token request.
func (w *worker) pendingAsk(k int) bool {
	for _, a := range w.kinds[:k] {
		if a {
			return true
		}
	}
	return false
}

// sent records that the first m of k batched requests left at now (the rest
// failed and are given back to the quota).
func (w *worker) sent(now int64, k, m int) {
	win := w.inWindow(now)
	for i := 0; i < k; i++ {
		ask := w.kinds[i]
		if i >= m {
			if !ask && w.quota >= 0 {
				w.quota++
			}
			continue
		}
		w.push(now, ask)
		if ask {
			w.asking++
		}
		if !win {
			continue
		}
		if ask {
			w.st.asks++
			w.st.bytesOut += int64(len(w.ask))
		} else {
			w.st.sent++
			w.st.bytesOut += int64(len(w.req))
		}
	}
}

// done reports whether the worker should stop: past the window plus a
// drain of -timeout, or nothing left to send nor to wait for.
func (w *worker) done(now int64) bool {
	if now >= w.stopAt+int64(w.cfg.timeout) {
		return true
	}
	return w.n == 0 && (now >= w.stopAt || w.quota == 0)
}

// sending reports whether new requests may go out.
func (w *worker) sending(now int64) bool { return now < w.stopAt && w.quota != 0 }
