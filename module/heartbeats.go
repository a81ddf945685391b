package module

// HeartbeatMetrics names the metrics of a module's master heartbeats (Quake
// 3's, today), which the status page's heartbeats card reads: Sent counts
// the datagrams sent to the masters with a label kind of "heartbeat" or
// "flatline", Errors the sends that failed, Getinfo the masters' queries
// answered. The zero value names none: no card.
type HeartbeatMetrics struct {
	Sent, Errors, Getinfo string
}
