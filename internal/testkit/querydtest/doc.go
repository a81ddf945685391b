// Package querydtest runs the queryd binary for the suites that test it
// from outside, as a user runs it: hostile/ (attacks), interop/ (real
// clients; its own module) and clients/ (the game-engine feed clients),
// and cmd/queryd's tests of the built command. It builds cmd/queryd once
// per test process for each way of building it (Build), writes a config
// from TOML tables on free loopback ports (New, WriteConfig), starts the
// daemon and waits until it is ready (Start), and stops it when the test
// ends, failing the test unless it exits cleanly (Stop). It also scrapes
// the daemon's /metrics (Metrics).
//
// A package that builds binaries runs its tests through Main, which
// removes them afterwards:
//
//	func TestMain(m *testing.M) { os.Exit(querydtest.Main(m)) }
//
// The daemon in the test's own process is daemon/daemontest's.
package querydtest
