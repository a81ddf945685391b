package dgram

// PassLimit is how much of one kind of datagram relay mode passes to the
// game server: those that a stock game server answers from one bucket for
// every source (ioquake3's getstatus, getinfo and getchallenge: a burst of
// 10, then 10 a second), which queryd's own [upstream] poll and probes
// draw on too. Passing less than that bucket lets the poll through
// whatever clients send. A module that knows such datagrams describes them
// (the daemon's PassLimiter capability); the relay applies the limits and
// names no protocol.
type PassLimit struct {
	// Match reports whether a datagram is of the kind. It runs for every
	// datagram the relay forwards: it must be quick and not allocate.
	Match func(p []byte) bool
	// Rate is how many such datagrams a second pass, all sources together,
	// after a burst of Burst; 0: no total limit.
	Rate  float64
	Burst int
	// SourceRate and SourceBurst are the same per source (an IPv4 address
	// or an IPv6 /64), checked first: one source cannot take the whole
	// Rate. 0: no per-source limit.
	SourceRate  float64
	SourceBurst int
}

// On reports whether the limit limits anything.
func (l PassLimit) On() bool { return l.Match != nil && (l.Rate > 0 || l.SourceRate > 0) }
