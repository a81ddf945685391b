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
// and the full-size flood (1,000,000 requests) with
//
//	go test ./hostile/ -run Flood -v -hostile.full
//
// The figures it measures are in README.md beside these tests;
// SECURITY.md at the root has the policy and the limits they test.
package hostile
