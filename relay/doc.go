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
// A module whose stock game server answers some requests from one bucket
// for every source, the bucket queryd's [upstream] poll needs too, gives the
// relay a limit on them (Config.Pass, dgram.PassLimit; Quake 3: getchallenge,
// [quake3] pass_rate and pass_source_rate): over it a datagram is dropped
// and counted as pass_limit before any session is looked up.
//
// # Sessions
//
// A source is an IPv4 address or an IPv6 /64; a site an IPv4 /24, an IPv6
// /56 (a home delegation) or an IPv6 /48. A session is fresh until the
// game server sends it a game datagram (one that is not connectionless,
// FF FF FF FF: Quake 3, Source and GoldSrc send those only to a client
// that completed its handshake, which a blind spoofer cannot) and the
// client speaks after it: then it is live (playing). It is proven once
// that two-way game traffic has lasted prove_after (5 s), or as soon as
// the game server asks the feed's peer about it. Sessions are capped:
//
//   - max_sessions (4,096) at once, of which proven_reserve (1/4: 1,024)
//     only proven sessions may take: sessions not proven hold at most
//     3,072. A newcomer that finds no room takes the place of the oldest
//     fresh session (the one that has had longest to prove itself: a
//     flood churns through its own sessions, and a new player gets as long
//     as the flood takes to cycle through 3,072 fresh sessions to finish
//     its handshake), else of a sampled live or proven session quiet for
//     more than loading_grace (15 s, a map load), else it is dropped
//     (sessions_full). A playing session is never evicted for a newcomer
//     until it has been quiet longer than loading_grace, and a proven one
//     never by new clients at all while it plays, however many come.
//   - share_ipv4_24, share_ipv6_56, share_ipv6_48 (1/16, 1/64, 1/16 of
//     max_sessions: 256, 64 and 256, at least max_sessions_per_ip) per
//     site: one home's /56 holds 4 /64s' worth, a /48 or a /24 (a CGNAT
//     pool, a campus) 1/16 of the server, so at least 12 /48s or /24s are
//     needed to fill the 3,072. At the cap a newcomer of the site takes the
//     place of the site's idlest evictable session of a sample of 16, else
//     it is dropped (site_full).
//   - max_sessions_per_ip (16) per source. At its cap a source's new port
//     replaces its own idlest evictable session, else it is dropped
//     (per_ip_full): one address cycling or keeping warm thousands of
//     ports holds 16 sessions. Players behind one NAT share the 16.
//   - open_rate (2 a second) per source after a burst of open_burst (16): a
//     source churning through ports opens sessions no faster (open_rate);
//     open_rate = 0 is no limit.
//
// Evictable by a newcomer of the same source or site: a fresh session
// quiet for 0.5 s, or any session quiet for more than loading_grace.
//
// What remains possible: a spoofer who can make the game server send game
// datagrams to addresses it does not hold (a game server that answers
// anything with a game datagram, as an echo does) makes its sessions live;
// the site caps then bound a spoofer of one site, not one spoofing the
// whole address space. A flood of fresh sessions faster than 3,072 per
// handshake time (a round trip or two) leaves a new player too little
// time to finish its handshake; players already playing keep playing.
//
// A session costs about 5 KiB of memory (its socket, a parked goroutine and
// no buffer: the game server's answers are read into a pooled buffer only
// while one is copied out), so 4,096 sessions take about 20 MiB. Each holds
// a file descriptor: queryd lowers max_sessions to fit its descriptor
// budget at start and on SIGHUP and warns when it does (README,
// "Operations").
//
// # What the game server sees
//
// With the game server on an IPv4 loopback address (upstream =
// "127.0.0.1:27961"), each client's sessions come from an address of
// 127.0.0.0/8 of its own, a keyed hash (random key per process) of its
// IPv4 address or IPv6 /64 in 127.1.0.0 to 127.254.255.255: the game
// server's per-address limits (ioquake3's getchallenge bucket), bans and
// per-IP connection limits work per player again. 127.0.0.1, where the
// [upstream] poller and the Quake 3 probe come from, is never one. Linux
// routes all of 127/8 to lo; where another address than 127.0.0.1 cannot
// be bound, and with the game server on ::1, every session uses that one
// address, and queryd warns so at start. With the game server on another
// host every session comes from queryd's address there. The addresses
// change when queryd restarts: a ban meant to last should use the real
// address from peer. docs/relay.md has a table.
//
// # No loops
//
// queryd check and the daemon refuse an upstream that would send datagrams
// back to queryd itself: one of its listen.udp addresses, or a loopback
// or local address at the port of a 0.0.0.0 or [::] listen address (a name
// is resolved for the check; of its addresses an IPv4 one is used). Such a
// relay would forward every datagram in a loop.
//
// At run time no session opens for a datagram from the game server's own
// address (any port, when it is on another host: one datagram spoofed from
// it would be relayed to it, the answer back to its own port, which
// answers that, and so on; its own address and port, when on loopback),
// from one of this host's addresses other than loopback ones (read again
// every 30 s), or from one of the relay's own session sockets; each is
// dropped and counted as loop. Loopback sources are processes on this host
// (the kernel takes no 127/8 source from outside), and may be players.
//
// # The real client behind a session
//
// The game server behind the relay sees every player at a session socket's
// address. The feed request
//
//	{"op":"peer","port":N}
//	{"op":"peer","port":N,"addr":"127.12.34.56"}
//
// returns the real client behind session port N (the source port the game
// server sees) and the session's address as the game server sees it:
//
//	{"ok":true,"peer":"IP:PORT","local":"127.12.34.56:N"}
//	{"ok":false,"error":"peer: no relay session on port N"}
//	{"ok":false,"error":"peer: 2 relay sessions use port N (…): give \"addr\""}
//	{"ok":false,"error":"peer: relay mode is off (set [relay] upstream)"}
//
// so the game server can ban and log real addresses. With per-client
// loopback addresses two sessions may share a port: addr (the address the
// game server sees the client at) tells them apart. A session asked about
// is proven.
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
//	share_ipv4_24 = 0.0625      # of max_sessions, per IPv4 /24; 0: no cap
//	share_ipv6_56 = 0.015625    # per IPv6 /56; 0: no cap
//	share_ipv6_48 = 0.0625      # per IPv6 /48; 0: no cap
//	proven_reserve = 0.25       # of max_sessions, for proven sessions only; 0 to 0.9
//	prove_after = "5s"          # two-way game traffic this long proves a session; 0s to 1m
//	loading_grace = "15s"       # a playing session quiet less than this is never evicted for a newcomer; 0s to 1h
//
// relay.Config has a field for each key that means the same (a zero
// open_rate, share or reserve is no limit there too).
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
//	queryd_relay_sessions_proven
//	queryd_relay_sessions_opened_total
//	queryd_relay_sessions_evicted_total
//	queryd_relay_dropped_total{reason="queue_full"|"sessions_full"|"per_ip_full"|"site_full"|"open_rate"|"loop"|"pass_limit"|"dial"|"send"|"too_large"}
//
// and every datagram the relay passed to the game server counts as
// queryd_requests_total{protocol="unknown",outcome="forwarded"}, every one
// it dropped (counted above with why) as outcome="relay_dropped".
// docs/metrics.md says what each means and what to watch.
package relay
