// Package testkit holds the small helpers that the tests of many packages
// share: free loopback ports and a buffer that a process's or a logger's
// goroutines may write while the test reads it, and SetParallel for a
// package whose parallel tests mostly wait. It imports no package of
// queryd, so that the tests of any package, production leaves included,
// may import it; the helpers that run queryd itself are in its
// subpackage querydtest, and the internal/ packages beside this one that
// are not test helpers (activity, lograte, nearest) stay leaves of the
// daemon.
package testkit
