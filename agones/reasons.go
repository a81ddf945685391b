package agones

// Reasons a read of the SDK server is not applied (label "outcome" of
// queryd_agones_reads_total, beside OutcomeApplied and OutcomeSame).
const (
	// ReasonTooLong: a line (or a GET answer) longer than MaxLine bytes,
	// skipped as it came, never held whole.
	ReasonTooLong = "too_long"
	// ReasonNotJSON: a line that is not JSON (or is empty).
	ReasonNotJSON = "not_json"
	// ReasonShape: JSON, but not a GameServer as the SDK sends it.
	ReasonShape = "shape"
	// ReasonError: the SDK server sent an error instead of a GameServer.
	ReasonError = "error"
	// ReasonTimeout: a line began and did not end within [agones] timeout
	// (the stream is dropped and opened again).
	ReasonTimeout = "timeout"
	// ReasonRejected: the state refused the mapped document (never
	// expected: the mapping makes only valid documents).
	ReasonRejected = "rejected"
	// ReasonFailed: no answer: the SDK server could not be reached, or
	// answered with an HTTP error.
	ReasonFailed = "failed"
)

// Outcomes of a read that was applied.
const (
	// OutcomeApplied: a GameServer that changed the document or its class.
	OutcomeApplied = "applied"
	// OutcomeSame: a GameServer that changed nothing queryd shows (it
	// still proves the SDK server answers).
	OutcomeSame = "same"
)

// Outcomes lists every outcome of a read.
var Outcomes = []string{OutcomeApplied, OutcomeSame, ReasonTooLong, ReasonNotJSON, ReasonShape, ReasonError, ReasonTimeout, ReasonRejected, ReasonFailed}
