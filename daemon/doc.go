// Package daemon is queryd's running daemon: a host of game servers. Each
// server (Server) wires its own state store, feed socket, UDP responder,
// relay mode, [upstream] poller (package upstream: a stock game server's
// own answers as the state), [agones] watcher, [sleep] cycle (package
// sleep: its game server stopped while empty, woken by a join), protocol
// modules and their services, budgets and silence value; the host holds what they share: the metrics registry
// (every per-server series labelled server="NAME", "main" for a one-server
// queryd), one challenge issuer and its clock, the admin endpoint
// (/metrics, /healthz, /healthz/NAME and the status page of package
// status, sampled by one tick for every server), the XDP fast path (one
// program for every server) and the supervisor. It reloads the config on
// SIGHUP — a new server file starts its server, a removed one stops it,
// a changed one reloads, a refused one keeps its server running — shuts
// down cleanly, and speaks the systemd readiness protocol.
//
// Every long-running part has one lifecycle: it acquires what it needs (a
// listening socket) when it is made, so that a start fails at once with the
// reason, then Serve(ctx) runs it until ctx is done. A server's parts run
// under a supervisor of its own, the host's (the fast path, the status
// tick, the admin listener) under the host's: the first host part whose
// Serve returns an error stops the daemon, the other parts in reverse
// start order, and Run returns that error, so queryd exits non-zero with
// the reason instead of running on deaf. A server part's failure stops
// that server alone while another server runs (logged, /healthz says it is
// down, SIGHUP starts it again); the last running server's failure, or
// the only server's, stops the daemon as a host part's does. Likewise at
// start: a server that cannot start is left down while another can, and
// the daemon fails to start only when none can.
//
// The challenge tokens are bound to the client's address, not to a
// server: one issuer serves the host, so a token one server issued is
// valid at another server of the same queryd for its lifetime (the same
// client, the same host: what a token proves — that the client receives
// at its address — holds for both).
//
// One value says what a server answers (Silence: asleep while its game
// server is stopped on purpose; silent while its feed is stale, or its
// [upstream] game server stale or not yet answered), why, since when
// and when it next changes; its UDP sockets, its modules
// (module.Env.Silent), its share of the XDP program, /healthz, the status
// page and queryd_silent all read it, so that no path decides it apart.
// One server's stale feed silences that server only.
//
// The daemon names no protocol: it is given the modules (Module), in demux
// order, by the registration list (package protocols, which cmd/queryd
// runs).
package daemon
