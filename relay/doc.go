// Package relay is queryd's relay mode: queryd owns the public game port,
// answers the queries it knows itself, and forwards every other datagram
// (the game's own traffic) to the game server, like etrelay. It keeps one
// session per client address and answers the feed's peer lookup.
//
// This comment is relay mode's reference: what is forwarded and how, the
// caps on sessions, the relay.* config keys, the feed's peer request and
// the metrics. docs/relay.md walks through a demo with a real OpenArena
// server behind queryd.
//
// # What is forwarded
//
// With relay.upstream = "HOST:PORT" the game server listens elsewhere
// (e.g. on loopback) and queryd's listen.udp address is the public game
// port. Datagrams no enabled protocol claims (for Quake 3: getchallenge,
// connect, in-game packets) go to the game server through one ephemeral UDP
// socket per client address (its session: the same upstream port for all
// its datagrams), and the game server's answers go back to the client from
// the public port the client wrote to. A session ends after idle_timeout
// (2 minutes) without a datagram either way.
//
// Datagrams of up to 65,535 bytes are written straight to the session's
// socket, never waiting: a full socket buffer drops, like a congested hop
// (counted as queue_full). Queries from a client with a session are still
// answered by queryd, and the game traffic keeps flowing while the feed is
// stale (only queryd's own answers go silent). Protocol parsers claim
// narrowly so that game packets pass: A2S claims its one-byte requests only
// when nothing but NUL bytes follows (so Quake 3's "ipAuthorize …" is
// relayed), and Quake 3 claims every getinfo/getstatus, so a broken query is
// dropped rather than relayed.
//
// # Sessions
//
// Sessions are capped three ways, per source meaning an IPv4 address or an
// IPv6 /64:
//
//   - max_sessions (4,096) at once. When all are taken, a new client evicts
//     the idlest of 16 sessions picked at random if it has been quiet for
//     0.5 s (a playing client never is), so spoofed one-packet sources
//     cannot lock players out; only a flood renewing every session twice a
//     second from thousands of addresses still can (counted as
//     sessions_full).
//   - max_sessions_per_ip (16) per source. At its cap a source's new port
//     replaces its own idlest session if that one has been quiet for 0.5 s,
//     else it is dropped (per_ip_full): one address cycling or keeping warm
//     thousands of ports holds 16 sessions and never locks other players
//     out. Players behind one NAT share the 16.
//   - open_rate (2 a second) per source after a burst of open_burst (16): a
//     source churning through ports opens sessions no faster (open_rate);
//     open_rate = 0 turns this off.
//
// A session costs about 5 KiB of memory (its socket, a parked goroutine and
// no buffer: the game server's answers are read into a pooled buffer only
// while one is copied out), so 4,096 sessions take about 20 MiB. Each holds
// a file descriptor: queryd lowers max_sessions to fit its descriptor
// budget at start and on SIGHUP and warns when it does (README,
// "Operations").
//
// # No loops
//
// queryd check and the daemon refuse an upstream that would send datagrams
// back to queryd itself: one of its listen.udp addresses, or a loopback
// or local address at the port of a 0.0.0.0 or [::] listen address (a name
// is resolved for the check; of its addresses an IPv4 one is used). Such a
// relay would forward every datagram in a loop.
//
// # The real client behind a session
//
// The game server behind the relay sees every player as queryd's address.
// The feed request
//
//	{"op":"peer","port":N}
//
// returns the real client behind session port N (the source port the game
// server sees):
//
//	{"ok":true,"peer":"IP:PORT"}
//	{"ok":false,"error":"peer: no relay session on port N"}
//	{"ok":false,"error":"peer: relay mode is off (set [relay] upstream)"}
//
// so the game server can ban and log real addresses.
//
// # Master servers
//
// A Quake 3 master lists the address a heartbeat came from. In relay mode
// that is the public game port, so players join what they find; without
// relay mode queryd check refuses [[quake3.masters]] unless
// quake3.query_port_is_join_port = true (package quake3).
//
// # Debug log
//
// With log.level = "debug" the relay logs one line per datagram it relays
// (docs/relay.md shows a master registration):
//
//	level=DEBUG msg="relay: datagram" part=relay client=198.51.100.10:27950 dir=upstream what=getinfo bytes=22
//
// dir is upstream (to the game server) or downstream (to the client); what
// is the Quake 3 connectionless command, the first word after FF FF FF FF
// as sent (getChallenge, getinfo, infoResponse, getstatus, connect, …),
// "connectionless" when no word follows, or "game" for anything else. The
// line is written as the datagram is handed on, so the log keeps their
// order; one the socket then drops is counted in queryd_relay_dropped_total.
// A session opened, ended or evicted is one line each with the sessions
// active ("relay: session +", "relay: session -", "relay: session
// evicted"). The lines are rate-limited by a token bucket: at most 50 a
// second after a burst of 50 (DebugLinesPerSecond); the lines over it are
// counted, and the next line allowed is preceded by "relay: debug lines
// suppressed" with their number, so a flood writes at most about 10 KB of
// log a second. The level is read at start: above debug the relay tests
// one bool per datagram and logs, locks and allocates nothing.
//
// # Config
//
// The relay section of queryd.toml (defaults shown). Changes take effect
// on restart, not on SIGHUP.
//
//	[relay]
//	upstream = ""               # the game server, "HOST:PORT"; "" turns relay mode off
//	idle_timeout = "2m"         # 1s to 1h
//	max_sessions = 4096         # 1 to 65536
//	max_sessions_per_ip = 16    # 1 to 65536
//	open_rate = 2.0             # sessions a source may open per second after the burst; 0: no limit
//	open_burst = 16             # 1 to 65536
//
// queue (datagrams queued per session) is no longer used: datagrams go
// straight to the session's socket. queryd check warns when it is set.
//
// # Metrics
//
// Registered when relay.upstream is set:
//
//	queryd_relay_packets_total{direction="upstream"|"downstream"}
//	queryd_relay_bytes_total{direction}
//	queryd_relay_sessions
//	queryd_relay_sessions_opened_total
//	queryd_relay_sessions_evicted_total
//	queryd_relay_dropped_total{reason="queue_full"|"sessions_full"|"per_ip_full"|"open_rate"|"dial"|"send"|"too_large"}
//
// and every forwarded datagram counts as
// queryd_requests_total{protocol="unknown",outcome="forwarded"}.
// docs/metrics.md says what each means and what to watch.
package relay
