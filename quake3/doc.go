// Package quake3 implements the Quake 3 family's connectionless server
// queries (ioquake3, OpenArena, Enemy Territory and their kin): parsing
// "getinfo" and "getstatus" requests, encoding infoResponse and statusResponse
// once per state snapshot, the master-server heartbeat and flatline messages
// (dpmaster's doc/techinfo.txt), and a small client. It opens no sockets
// except in Client and keeps no per-client state.
//
// This comment is the protocol's reference in queryd: the bytes on the wire,
// the limits, the quake3.* config keys, master heartbeats, the metrics and
// what clients do. queryd can also own the public game port in front of the
// game server and forward the game's own traffic: that is relay mode,
// documented in package relay (relay/doc.go). The operator's overview of
// every protocol is docs/protocols.md.
//
// # Requests
//
//	FF FF FF FF "getinfo"   [" " challenge] [ "\n" | NUL ]
//	FF FF FF FF "getstatus" [" " challenge] [ "\n" | NUL ]
//
// queryd reads a request as ioquake3 does (SV_ConnectionlessPacket): the
// line after FF FF FF FF ends at the first "\n" or NUL (what follows is
// ignored) and counts at most 1,023 bytes; it is split into tokens as
// Cmd_TokenizeString splits it: any byte from 1 to 32 separates, "//"
// ends the line, "/*" to the next "*/" is skipped, a token starting with
// '"' runs to the next '"' (or the end). The command is the first token, in
// any case (Q_stricmp); the challenge the second (what follows it is
// ignored), of 1 to 128 printable ASCII characters other than \ ; and "
// (dpmaster's rule, which also keeps the challenge from breaking the info
// string). So " getstatus", "\tgetinfo abc", "\"getstatus\"" and
// "/**/getinfo" are queries, as the stock server reads them, and queryd
// answers them: none reaches a game server behind queryd.
//
// queryd claims exactly these (Claims), and the XDP program's claim
// (xdp/bpf/quake3.h) exactly the same set: "getinfox", which the stock
// server does not answer, is not claimed and goes to a game server behind
// queryd. A query with a challenge outside the rule is malformed and
// dropped.
// quake3/command_test.go checks the reader against a literal port of
// ioquake3's (FuzzCommand).
//
// # infoResponse
//
//	FF FF FF FF "infoResponse\n" \key\value\key\value…
//
// No trailing newline. The keys come in ioquake3's order: the [quake3.info]
// extras, g_needpass, gametype, sv_maxclients, g_humanplayers, clients,
// mapname, hostname, protocol, gamename, and \challenge\X last when the
// request had one.
//
// # statusResponse
//
//	FF FF FF FF "statusResponse\n" \key\value… "\n"
//	score ping "name" "\n"     one line per player
//
// The info string holds \challenge\X first when the request had one, then
// sv_hostname, mapname, sv_maxclients, protocol (not when the state's rules
// have com_protocol and no protocol: ioquake3's statusResponse carries
// com_protocol instead), gamename, g_gametype, g_needpass, version (when
// the state has one), the [quake3.info] extras and the state's rules as
// cvars (in key order; a rule named like one of the
// keys before it, compared without case, is left out). Players come in the
// order queryd first saw their ids.
//
// # Where the values come from
//
//	hostname, sv_hostname       state name
//	mapname                     state map
//	clients / g_humanplayers    every player / players without "bot": true
//	sv_maxclients               state max_players, raised to the player count and to at least 1 (dpmaster ignores 0)
//	protocol                    the rule protocol, else the rule com_protocol (ioquake3's), else quake3.protocol (68; ioquake3 71, ET 84)
//	gamename                    quake3.gamename, else (infoResponse) the rule com_gamename (ioquake3 sends it there),
//	                            else the state's folder, else "queryd"; spaces become _ (dpmaster refuses them)
//	gametype, g_gametype        the rule g_gametype when the state has it, else quake3.gametype (0)
//	g_needpass                  state password (1 or 0)
//	version                     state version (statusResponse)
//	player ping                 bots 0 (as Quake 3 shows them); an unknown ping (a negative one in the state) 999, what
//	                            ioquake3 shows for a client not active yet; everyone else at least 1, since clients
//	                            (gamedig) count ping-0 players as bots
//
// # Characters the format forbids
//
// They are replaced byte for byte in keys, values and player names, so UTF-8
// text stays valid:
//
//	\  (separates keys and values)                        becomes /
//	;  (separates console commands)                       becomes :
//	"  (quotes player names)                              becomes '
//	newline, carriage return, other control characters    become a space
//
// Quake colour codes (^1) are passed through; qstat and gamedig strip them.
//
// # Sizes
//
// A reply is at most 16 KiB with the longest challenge; the status info
// string at most 8 KiB (ioquake3's BIG_INFO_STRING): rules that do not fit
// are left out, then players that do not fit the 16 KiB. The reply
// structure was checked against a real ioquake3 server (Debian
// openarena-server 0.8.8, ioquake3 1.36): ioquake3_test.go compares queryd's
// replies with that server's captured replies, request by request.
//
// # No challenge, so limits
//
// Quake 3 cannot prove a source address, so every reply is unproven: it
// draws on the global unproven byte budget (limits.unproven_rate) and the
// per-IP byte budget, and each source may send getinfo and getstatus at
// quake3.packet_rate per second after a burst of packet_burst: by default
// ioquake3's own limit (SVC_RateLimitAddress), a burst of 10 then 1 a second
// per IPv4 address or IPv6 /64. packet_rate = 0 turns it off. Requests over
// the rate count as rate_limited. A script polling in a loop meets it
// first (a query is getinfo and getstatus): `queryd query` says so
// (module.Probe.Rate) when a Quake 3 query goes unanswered. Quake 3's
// replies are the largest an unproven source can draw: up to 16,245 bytes
// (1,250 times a 13-byte getstatus) with a full state; hostile/README.md
// ("Amplification by state") gives every protocol's reply at three
// states, hostile/amplification_test.go the formulas.
//
// # What relay mode passes: the stock server's global bucket
//
// ioquake3 answers getstatus, getinfo and getchallenge (as its parser
// reads them) only within a per-address bucket (a burst of 10, then one a
// second) and then one bucket for every source: a burst of 10, then one
// per 100 ms (SVC_RateLimit(&outboundLeakyBucket, 10, 100)). queryd's
// [upstream] poll and the heartbeats' probe (getstatus, getinfo) draw on
// that global bucket too. queryd answers every getinfo and getstatus
// itself (Requests, above), so of these only getchallenge reaches the
// game server (all three with [quake3] off). Relay mode passes them
// (GloballyLimited) at most pass_source_rate a second per source after
// pass_source_burst, then at most pass_rate a second in total after
// pass_burst (Module.PassLimit, the daemon's PassLimiter capability; the
// relay names no protocol): by default 4 then one every 10 s per source,
// 5 then 5 a second in total, half the stock server's bucket. Before, 40
// addresses sending one such datagram a second each starved the poll:
// queryd went stale and answered nothing (hostile/relayq3poll_test.go).
// What remains: a flood from more than 50 sources (each passes one every
// 10 s) fills pass_rate, and a new player's getchallenge then competes
// with it, as it would at a stock server without queryd; the poll is not
// affected. The keys apply on SIGHUP. In divert mode the XDP program
// decides what passes to the game server (package xdp).
//
// # Master servers
//
// With [[quake3.masters]] (address, heartbeat, optional flatline) queryd
// sends
//
//	FF FF FF FF "heartbeat <heartbeat>\n"
//
// from its public UDP socket, so the master's "getinfo <challenge>" comes
// back to queryd, which answers it with the keys dpmaster requires
// (challenge, protocol, clients, sv_maxclients above 0, gamename without
// spaces). Heartbeats go out at start, every 5 minutes, and at once when the
// server becomes empty, non-empty, full or not full. Masters are resolved
// on every heartbeat. FF FF FF FF "heartbeat <flatline>\n" (ET's
// ETFlatline-1) goes to the masters that have one on shutdown and when the
// server goes down; heartbeats resume when it comes back. Down means
// queryd is silent (the feed is stale, or with [upstream] the game server
// has not answered for stale_after); or, in relay mode with quake3.enabled = false (the masters'
// getinfo then go to the game server, which may never feed queryd), that the
// game server does not answer getinfo, as etrelay checks: before every
// heartbeat and every 30 s (ProbeEvery) queryd sends the game server
// "getinfo <random challenge>" from a socket of its own, up to 3 times
// (ProbeAttempts) waiting 3 s each (ProbeTimeout); no infoResponse echoing
// the challenge means down. While it is down no heartbeat goes out. Heartbeat names:
// DarkPlaces (dpmaster), QuakeArena-1 (Quake 3), EnemyTerritory-1 (ET). A
// heartbeat leaves from the first listen.udp socket of the master's
// address family. Changes to [[quake3.masters]] and [relay] take effect on
// restart, not on SIGHUP.
//
// A master lists the address the heartbeat came from, so players browsing it
// join queryd's address. queryd check therefore refuses masters unless relay
// mode is on (relay.upstream, package relay) or
// quake3.query_port_is_join_port = true says players really do join there; it
// also refuses masters with quake3.enabled = false and no relay, since
// nothing would answer the master's getinfo. With relay mode on, heartbeats
// list the public game address, so players can join what they find.
//
// # Config
//
// The quake3 section of queryd.toml (defaults shown; changes apply on
// SIGHUP except [[quake3.masters]]):
//
//	[quake3]
//	enabled = true
//	gamename = ""       # "": the state's folder, else "queryd"; 1-64 printable ASCII, no spaces, \ ; or "
//	protocol = 68       # 1 to 1048576; 68 is Quake III Arena 1.32, ioquake3 71, Enemy Territory 84
//	gametype = 0        # 0 to 1000; unless the state's rules set g_gametype
//	packet_rate = 1.0   # getinfo/getstatus per second per source; 0 turns the limit off
//	packet_burst = 10
//	pass_rate = 5.0           # relay mode: getchallenge (+ getinfo/getstatus when off) passed per second, all sources; 0: no limit
//	pass_burst = 5            # 1 to 1000
//	pass_source_rate = 0.1    # the same per source (IPv4 address or IPv6 /64); 0: no limit; 0 to 1000
//	pass_source_burst = 4     # 1 to 1000
//	query_port_is_join_port = false
//
//	[quake3.info]       # at most 32 extra keys for both replies (not the keys queryd sets)
//	pure = "1"
//
//	[[quake3.masters]]  # at most 16
//	address = "master.ioquake3.org:27950"   # HOST:PORT
//	heartbeat = "QuakeArena-1"              # "DarkPlaces", "QuakeArena-1", "EnemyTerritory-1"
//	flatline = "ETFlatline-1"               # optional
//
// [quake3.info] keys follow the gamename rule; they cannot name a key queryd
// sets (challenge, clients, g_gametype, g_humanplayers, g_needpass,
// gamename, gametype, hostname, mapname, protocol, sv_hostname,
// sv_maxclients, version); values are at most 256 bytes without \ ; " or
// control characters.
//
// # Metrics
//
//	queryd_requests_total{protocol="quake3",outcome}   answered, malformed, rate_limited, stale
//	queryd_received_bytes_total{protocol="quake3"}, queryd_sent_bytes_total{protocol="quake3"}
//
// and, registered when [[quake3.masters]] is set:
//
//	queryd_quake3_heartbeats_total{kind="heartbeat"|"flatline"}
//	queryd_quake3_heartbeat_errors_total     the master's name did not resolve or the socket refused
//	queryd_quake3_master_getinfo_total       challenged getinfo from a master's address answered
//	queryd_quake3_upstream_probes_total{result="answered"|"silent"}   the game server's probes (relay mode, quake3 off)
//
// docs/metrics.md says what each means and what to watch.
//
// # Clients
//
// queryd query -proto quake3 HOST:PORT asks getinfo and getstatus with
// random challenges and prints both. qstat (-q3s, -woets) sends "getinfo\n"
// then "getstatus\n"; gamedig (quake3, wet) sends "getstatus\0", counts
// ping-0 players as bots and decodes names as Latin-1 (UTF-8 names show as
// mojibake). Both are checked in interop/quake3_test.go. In Go: [Dial], then
// [Client.Info] and [Client.Status]; Client.Timeout (default 2 s) bounds each
// request. The client drops replies that do not echo its challenge (a stale
// or forged one), replies it cannot parse and other packets until the
// timeout (the real reply may follow); nothing but dropped replies is a
// [*BadAnswerError] saying why the last was dropped.
// Quake 3 has no challenge round trip, so this client has no
// ErrOnlyChallenges.
//
// # Polling a stock server
//
// With [upstream] protocol = "quake3", Module.Poll sends "getstatus
// <random challenge>" from a socket of the poll's own; only the
// statusResponse that echoes the challenge is read (a late, forged or
// unreadable one is dropped). FromStatus maps it:
//
//	state field   statusResponse
//	name          sv_hostname (else hostname)
//	map           mapname
//	max_players   sv_maxclients (a count 0-65535; else a rule)
//	version       version
//	folder        gamename
//	game          com_gamename (also kept as a rule)
//	password      g_needpass (not "" or "0")
//	rules         every other key (the challenge is dropped): the server's
//	              own cvars and nothing else
//	players       each line's name, score and ping (0 to 65535); ping 0 is a bot; ping 999
//	              (ioquake3: a client not active yet) or a negative one is unknown (state ping -1)
//
// So a front answers getstatus as the stock server does: the same cvars
// and values (its protocol number and both its gamenames come from the
// rules protocol, com_protocol and com_gamename, whatever quake3.protocol
// says) and the same player lines. getinfo gets the stock server's keys
// and values but for those its statusResponse does not carry (ioquake3's
// voip and pure), which a poll never sees. What else may differ: the cvars'
// order (the state keeps rules in key order), hostname for a server that
// sends it instead of sv_hostname (the front says sv_hostname), a g_needpass
// other than 0 or 1 (the front says 1), the keys queryd always sets
// (sv_hostname, mapname, sv_maxclients, gamename, g_gametype, g_needpass)
// for a server that lacks them, and a human with ping 0 (shown as a bot, as
// clients count it anyway). cmd/queryd/upstream_faithful_test.go compares a
// front with a real ioquake3 server (Debian's openarena-server) field by
// field, and quake3/faithful_test.go with the captured replies.
package quake3
