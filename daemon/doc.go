// Package daemon is queryd's running daemon: it wires the state store, the
// feed socket, the UDP responder, relay mode, the [upstream] poller (package
// upstream: a stock game server's own answers as the state), the protocol
// modules and their services, and the admin endpoint (/metrics, /healthz
// and the status page of package status); it reloads the config on SIGHUP,
// shuts down cleanly, and speaks the systemd readiness protocol.
//
// Every long-running part has one lifecycle: it acquires what it needs (a
// listening socket) when it is made, so that a start fails at once with the
// reason, then Serve(ctx) runs it until ctx is done. The parts run under one
// supervisor (Daemon.Run): the first part whose Serve returns an error stops
// the daemon, the other parts in reverse start order, and Run returns that
// error, so queryd exits non-zero with the reason instead of running on
// deaf (a feed whose accept loop died, an admin server that failed).
//
// One value says whether queryd is silent (Silence: the feed stale, or the
// [upstream] game server stale or not yet answered), why, since when and
// when it next changes; the UDP sockets, the modules (module.Env.Stale),
// the XDP program's deadline, /healthz, the status page and queryd_silent
// all read it, so that no path decides it apart.
//
// The daemon names no protocol: it is given the modules (Module), in demux
// order, by the registration list in cmd/queryd.
package daemon
