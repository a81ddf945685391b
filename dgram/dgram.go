// Package dgram holds the few types a protocol handler and the UDP responder
// exchange, so that neither imports the other.
package dgram

// Outcome is what a protocol handler did with one datagram. The responder
// counts it (per protocol) and applies the rate limits that go with it.
type Outcome uint8

// The outcomes, in the order of Outcomes.
const (
	// Answered: replies to a source that proved its address (a valid token).
	Answered Outcome = iota
	// AnsweredOpen: replies to a source that did not prove its address (no
	// challenge in the protocol, or a query the config lets through without
	// one). Such replies draw on the global unproven budget.
	AnsweredOpen
	// Challenged: a challenge sent back; an unproven source.
	Challenged
	// Malformed: the datagram was this protocol's but broken; dropped.
	Malformed
	// Ignored: well formed but not answered (wrong or expired token where the
	// protocol sends nothing, or a request type this server does not serve).
	Ignored
	// NumOutcomes is the number of outcomes a handler can return.
	NumOutcomes
)

// String is the outcome's metrics label.
func (o Outcome) String() string {
	switch o {
	case Answered, AnsweredOpen:
		return "answered"
	case Challenged:
		return "challenged"
	case Malformed:
		return "malformed"
	case Ignored:
		return "ignored"
	}
	return "unknown"
}

// Proven reports whether the replies go to a source that proved its address.
func (o Outcome) Proven() bool { return o == Answered }
