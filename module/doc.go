// Package module is the contract between queryd's daemon and its protocol
// modules (a2s, gamespy4, sagl, quake3, …). A protocol module is one package
// that owns everything about its protocol: the wire format, its config
// section, building its handler, its services and its query client. The
// daemon and `queryd query` define the small interfaces they consume; this
// package holds the types those interfaces share, so that no module imports
// the daemon and the daemon names no module:
//
//   - Env: what the daemon gives a module to build its handler and services.
//   - Protocol: the handler a module builds (answer datagrams, re-encode on a
//     new state snapshot).
//   - Service: a part that runs beside the responder (an HTTP listener,
//     master heartbeats), with the daemon's one lifecycle.
//   - Answer, Summary, Probe, QueryOptions: what a module's client gives
//     `queryd query`.
//   - BadAnswer and ErrOnlyChallenges: the errors every client returns for
//     an unusable reply and for a server that answers only with challenges.
//
// Adding a protocol is one new package implementing the daemon's and the
// query command's interfaces with these types, plus one line in the
// registration list (package protocols).
package module
