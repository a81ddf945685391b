package responder

// DatagramsPerLoop returns how many datagrams each receive loop of s has
// counted so far (every outcome), in the order the loops started: with the
// batch socket layer, one loop per socket.
func DatagramsPerLoop(s *Server) []uint64 {
	s.metrics.mu.Lock()
	defer s.metrics.mu.Unlock()
	out := make([]uint64, len(s.metrics.workers))
	for i, w := range s.metrics.workers {
		for r := range w.req {
			for o := range w.req[r] {
				out[i] += w.req[r][o].Load()
			}
		}
	}
	return out
}
