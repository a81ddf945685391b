// Command queryd answers game-server queries for a game server that feeds
// it its state over a Unix socket: server browsers, server lists and bots
// ask it over UDP in the protocols of its modules (the one registration
// list, package protocols), and each gets the same state.
//
// Usage:
//
//	queryd [run] [-config FILE]
//	queryd query [-proto NAME|auto] [-timeout D] [-json|-table] [-logo FILE] HOST:PORT
//	queryd push [-socket PATH] [FILE|-]
//	queryd check [-local=false] [-config] FILE
//	queryd version
//
// # run
//
// Runs the daemon on the config FILE (TOML; queryd.toml.example lists every
// key), or without -config on the embedded demo config (config/default.toml:
// a demo state on UDP 0.0.0.0:27015, the feed socket in a private folder).
// Config warnings and the descriptor budget are logged at start. SIGTERM and
// SIGINT stop it cleanly (the feed socket is removed); SIGHUP reloads the
// config ([server], [limits] and the protocol sections at once; the rest
// needs a restart, logged). Under systemd it reports readiness, reloads and
// stopping through $NOTIFY_SOCKET. Exit status: 0 after a clean stop; 1 when
// it cannot start or a part fails for good (the reason is logged); 2 on a
// usage error.
//
// # query
//
// Asks the server at HOST:PORT (a port is required: each protocol has its
// own usual one) and prints the answer as JSON on stdout, or with -table a
// row per protocol and why any did not answer. -proto auto (the default)
// asks every protocol at once; -timeout (3s) bounds the whole command;
// -logo saves the SAGL logo. Exit status: 0 answered; 1 no answer (or one
// the client refuses, named on stderr); 2 on a usage error.
//
// # push
//
// Sends feed messages (NDJSON, one per line) from FILE or stdin to the feed
// socket and prints each reply line. Without -socket it uses the socket of
// [feed] socket = "" (the demo's): $XDG_RUNTIME_DIR/queryd/feed.sock, else
// <tmp>/queryd-<uid>/feed.sock. Exit status: 0; 1 at the first rejected
// line (its reply printed, the line named on stderr) or when the socket
// cannot be reached; 2 on a usage error.
//
// # check
//
// Validates FILE and prints every error with its key, and the warnings, in
// one run; an unknown key names the nearest known one. Unless
// -local=false it also checks what the start needs of this host: the feed
// socket's folder, another program serving the socket, a [listen] udp or
// [admin] address another process holds (not when a running queryd answers
// on the socket: systemctl reload runs check beside it), the [xdp]
// interfaces. It prints "FILE: ok" on stdout when the config can start.
// A host (a main file whose [servers] include server files, or that is no
// server itself) is checked in one run with every server file: each error
// and warning line starts with its file, the local checks run for each
// server (the [admin] and [xdp] ones once), and stdout says "FILE: ok (N
// server(s): NAME, …)". Exit status: 0 ok (warnings or not); 1 errors in
// any file; 2 on a usage error.
//
// # version
//
// Prints the version, the commit and the Go toolchain that built the binary
// and its platform: `queryd v1.2.3 (commit 0123…, go1.26.8, linux/amd64)`.
// Releases set the version and commit at link time (-ldflags "-X
// main.version=… -X main.commit=…"); otherwise they come from what Go
// recorded (`go install …@v1.2.3`, a build in a git clone).
package main
