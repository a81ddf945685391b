//go:build race

package relay

// raceBuild: the race detector makes goroutines and their stacks larger, so
// the session-cost bound is wider under it (TestRelaySessionCost).
const raceBuild = true
