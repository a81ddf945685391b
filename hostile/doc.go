// Package hostile holds queryd's hostile-input suite: tests that run the
// real daemon (built once with the race detector) on loopback and attack it
// the way the open internet will — reflection attempts from many sources
// that never complete a challenge, floods from tens of thousands of spoofed
// addresses, random and mutated datagrams, broken feed messages and process
// faults — and check that it amplifies nothing past its budgets, keeps its
// memory bounded, answers legitimate clients, counts every datagram, and
// never loses or half-applies the game server's state.
//
// The package has no non-test code. Run it with
//
//	go test -race ./hostile/
//
// or, for its logic without the floods, namespaces, real game servers and
// other tests over about 2 s (each says why it skips), in under a minute:
//
//	go test -short ./hostile/
//
// The floods and the latency figures run one at a time; the tests that
// mostly wait (slow attacks at a byte a second, namespaces paced far under
// a CPU, a real game server, stale_after timers) call t.Parallel and run 4
// at a time after them (-test.parallel, unless given, is raised to 4).
//
// and the full-size flood (1,000,000 requests) with
//
//	go test ./hostile/ -run Flood -v -hostile.full
//
// The figures it measures are in README.md beside these tests;
// SECURITY.md at the root has the policy and the limits they test.
package hostile
