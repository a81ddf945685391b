// Package feed is the interface through which the game server feeds its
// state to queryd: newline-delimited JSON messages (replace, patch, ping,
// get, peer) over a Unix socket, one reply line each, and the same messages
// over a loopback HTTP listener. It holds the server side and a Go client
// for game servers written in Go.
//
// This comment is the feed's reference: the socket, the messages and their
// replies, the limits, staleness, the feed.* config keys and the metrics.
// The state document the messages carry is described in package state.
//
// # The socket
//
// The game server connects to the Unix stream socket feed.socket and
// writes one JSON object per line (at most 1 MiB, valid UTF-8). Every line
// gets exactly one reply line, in order:
//
//	{"ok":true,"version":N}
//	{"ok":true,"version":N,"warnings":["<what was cut>", …]}
//	{"ok":false,"error":"<what and where>"}
//
// A rejected message changes nothing and the connection stays usable.
// Several connections may feed at once. The socket file is created with
// feed.mode (0660) and feed.group, and removed on exit; it is never open
// to more than its owner until it has them, whatever the umask. An existing
// socket file at the path is replaced unless a live server answers on it;
// any other file there is an error and is never deleted.
//
// With socket = "" the socket goes in $XDG_RUNTIME_DIR/queryd/, else in
// <tmp>/queryd-<uid>/. queryd makes that folder (mode 0700) or uses the one
// there only if it is a directory, not a symbolic link, owned by queryd's
// user and not writable by group or others (and its parent, if others may
// write to it, is sticky like /tmp); otherwise it exits with status 1 and
// says which folder and what is wrong.
//
// # The HTTP feed
//
// With feed.http set (a loopback address only: 127.0.0.0/8 or ::1), the
// same messages come as HTTP requests (HTTPServer), applied by the same
// Server: PUT /v1/state (replace; the body is the document), PATCH
// /v1/state (patch; application/merge-patch+json or application/json),
// GET /v1/state (get), POST /v1/ping, POST /v1/peer (body {"port":N}),
// POST /v1/wake (wake).
// Every request carries Authorization: Bearer <token>, the token being
// read from feed.http_token_file (ReadToken: a regular file, not a link,
// mode 0600 or 0640, at least 16 bytes) at start and on SIGHUP, and
// compared in constant time. Answers are the replies above as JSON: 200
// (ok), 400 (the socket's error), 401 (missing or wrong token; nothing
// changes), 404, 405, 413 (a body over MaxLine). docs/feed.md has the
// caps and examples.
//
// # Messages
//
//	{"op":"replace","state":{…}}   the whole document; absent fields fall back to [server]; absent players means no players
//	{"op":"patch","state":{…}}     an RFC 7386 JSON merge patch on the current document (null removes)
//	{"op":"ping"}                  keep-alive; changes nothing; replies with the current version
//	{"op":"get"}                   the reply carries the current document as "state"
//	{"op":"peer","port":N}         relay mode: the real client behind upstream-facing port N,
//	                               {"ok":true,"peer":"IP:PORT","local":"IP:N"} (package relay);
//	                               "addr":"IP" (optional) names the address the game server
//	                               sees, needed when sessions at several addresses share port N
//	{"op":"wake"}                  [sleep]: start the game server if it is asleep (package sleep);
//	                               ok as soon as the wake has begun (or when it runs or wakes already),
//	                               an error when it does not sleep or no wake may begin now
//
// Any other op, a field the op does not take, a missing or non-object
// "state", a port outside 1-65535, an empty line or a line that is not one
// JSON object gets an error reply saying which. A state error names the
// field: "state.players.3.score: want an integer from -2147483648 to
// 2147483647, got 1.5"; an unknown field names the nearest known one:
// "state.mapp: unknown field (did you mean map?)".
//
// Values real feeders send are accepted in the form queryd keeps (package
// state, "Validation"): integral floats (3.0, 3e0) are integers, a negative
// ping is unknown, and text over its limit is cut on a character boundary.
// An accepted replace or patch that had text cut says so in "warnings",
// one line per value in path order (Reply.Warnings):
//
//	{"ok":true,"version":7,"warnings":["state.players.3.name: cut to 64 characters (was 70)"]}
//
// A message is applied whole or not at all: a refused one carries no
// warnings. Over HTTP the 200 answer carries the same warnings.
//
// # Limits
//
// Each limit ends a connection with an error line (reconnect and go on); an
// idle connection between lines is kept as long as it likes.
//
//	limit          default    what passes it, and the error line
//	(line limit)   1 MiB      a line longer than 1 MiB: "line longer than 1048576 bytes; closing the connection"
//	max_conns      64         one more connection than this: "too many feed connections (64 open, [feed] max_conns); closing"
//	max_buffered   "16MiB"    a line that would take the unfinished lines of all connections past this
//	                          (each connection's first 4 KiB are not counted): "feed buffers full: …"
//	line_timeout   "10s"      a line not finished this long after its first byte, or a reply the peer
//	                          does not read for this long: "line not completed within 10s ([feed] line_timeout); …"
//
// The accept loop waits out a shortage of descriptors or memory (EMFILE,
// ENFILE, ENOBUFS, ENOMEM: backoff from 5 ms to 1 s, logged at most once a
// second) instead of ending; if it does end for another reason, queryd exits
// with status 1 so that its supervisor restarts it.
//
// # What queryd answers
//
// queryd's liveness contract (docs/feed.md, "What queryd answers", has it
// with the status page and metrics): each server answers the game's current
// state, or [server] before any source has sent state ("not fed yet"), or
// nothing (silent). The game's state is what a feeder last sent (an accepted
// replace or patch) over the [upstream] game server's last answer over
// [server]. Before the first accepted state, and without an [upstream]
// answer, queryd serves [server] and says so: /healthz "state":"not_fed",
// "fed":false; queryd_server_state{state="not_fed"}; the status page "not
// fed yet: serving [server]".
//
// Feed activity (Activity) is an accepted replace or patch, or a ping. A
// rejected message, get, peer, wake, and a connection that sends nothing
// (what `queryd check` does beside a running queryd) are never activity,
// over the socket or HTTP: what only reads never changes what queryd
// answers, and a wake comes from the game's matchmaking, not from the game.
//
// A server with [sleep] whose game server is stopped on purpose is asleep:
// it answers its last state with no players, and its feed is not stale
// while it sleeps or wakes; once it is awake again, stale_after counts from
// the wake (package sleep).
//
// # Stale feed
//
// Once the feed has had activity, queryd goes silent (no protocol answers
// anything, not even challenges) when it has had none for feed.stale_after
// (default 60 s), and speaks again on the next. An open but idle connection
// is not activity; ping is. A feed that never had activity never silences
// queryd: a static [server], or a relay + [upstream] server whose state
// comes from the game server (silent only while that one is). While stale,
// /healthz answers 503, queryd_feed_stale is 1, queryd_server_state says
// silent with reason feed, requests count as outcome="stale", SAGL HTTP
// answers 503 and Quake 3 masters get a flatline; relayed game traffic keeps
// flowing.
//
// # Config
//
// The feed section of queryd.toml (defaults shown; changes need a
// restart):
//
//	[feed]
//	socket = ""             # "": $XDG_RUNTIME_DIR/queryd/feed.sock, else <tmp>/queryd-<uid>/feed.sock
//	mode = "0660"           # permissions of the socket file (octal string)
//	group = ""              # group of the socket file (name or id); "": the default
//	stale_after = "60s"     # "0s" turns staleness off
//	max_conns = 64          # 1 to 65536
//	max_buffered = "16MiB"  # 1MiB to 1GiB
//	line_timeout = "10s"    # at least "100ms"; over HTTP, the time a request may take
//	http = ""               # e.g. "127.0.0.1:27017": the HTTP feed (loopback only)
//	http_token_file = ""    # required with http
//	http_max_conns = 16     # 1 to 4096
//
// # Metrics
//
//	queryd_feed_stale                  1 while the feed is stale
//	queryd_feed_connections            feed connections open
//	queryd_feed_buffered_bytes         bytes held by unfinished lines beyond each connection's 4 KiB
//	queryd_feed_dropped_connections_total{reason="max_conns"|"max_buffered"|"line_timeout"|"line_too_long"}
//	queryd_feed_accept_retries_total   accepts retried for want of descriptors or memory
//	queryd_feed_http_connections, queryd_feed_http_closed_total{reason="over_cap"|"idle"},
//	queryd_feed_http_accept_retries_total, queryd_feed_http_responses_total{code}
//	queryd_state_version, queryd_state_players
//
// docs/metrics.md says what to watch.
//
// # Clients
//
// From a shell: queryd push [-socket PATH] [FILE|-] sends the lines of a file
// or stdin and prints each reply; it exits 1 on the first rejected message.
// From Go: [Dial], then [Client.Replace], [Client.Patch], [Client.Ping] and
// [Client.Get] (Client.Timeout, default 5 s, bounds each round trip; a
// rejected message is a [*ReplyError]). examples/ has feeders in Node.js,
// Python and shell, and clients/ game-engine clients in C#, C++ and
// GDScript, that the tests run against a live daemon.
package feed
