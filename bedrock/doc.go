// Package bedrock implements the Minecraft Bedrock Edition server status:
// RakNet's unconnected ping and pong (the "offline" messages a Bedrock
// client's server list and LAN discovery send before any connection).
// The pong is encoded once per state snapshot; the package opens no
// sockets except in Client and keeps no per-client state.
//
// This comment is the protocol's reference in queryd: the bytes on the wire,
// the limits, the bedrock.* config keys, the metrics and what clients do.
// The operator's overview of every protocol is docs/protocols.md.
//
// # Ping
//
//	01 time(i64) magic client-GUID(i64)     exactly 33 bytes
//
// The id is 01 (ID_UNCONNECTED_PING) or 02 (..._OPEN_CONNECTIONS, answered
// the same: queryd has no connections to count); every integer is
// big-endian; the magic is RakNet's 16 bytes
//
//	00 FF FF 00 FE FE FE FE FD FD FD FD 12 34 56 78
//
// at offset 9. queryd claims a datagram of exactly 33 bytes with the magic
// at offset 9; one of those with another id is malformed (dropped and
// counted). RakNet's other offline messages (open connection requests)
// carry the magic at offset 1 and are longer: in relay mode they go on to
// the game server.
//
// # Pong
//
//	1C time(i64, the ping's, echoed byte for byte) server-GUID(i64) magic length(u16) status
//
// length is the status string's size in bytes; nothing follows it. The
// status string is UTF-8, each field followed by ';':
//
//	edition;motd;protocol;version;players;max;server GUID;sub-motd;game mode;game mode number;IPv4 port;IPv6 port;
//
// Where the fields come from:
//
//	edition            state bedrock.edition, else bedrock.edition ("MCPE"; "MCEE" for Education Edition), at most 16 bytes
//	motd               state name, at most 256 bytes
//	protocol           state bedrock.protocol, else bedrock.protocol (766, Bedrock 1.21.50): the game shows servers with another number as outdated
//	version            state version, at most 64 bytes ("" when the state has none)
//	players            every player of the state
//	max                state max_players
//	server GUID        the header's server GUID in decimal: state bedrock.server_id, else queryd's own
//	sub-motd           state map, at most 128 bytes
//	game mode          state gamemode, else bedrock.game_mode ("Survival"), at most 64 bytes
//	game mode number   state bedrock.game_mode_number, else bedrock.game_mode_number (1, as vanilla sends for Survival)
//	IPv4 port          state game_port, else bedrock.ipv4_port, else the first listen.udp port
//	IPv6 port          state bedrock.ipv6_port (even 0), else bedrock.ipv6_port, else the IPv4 port
//
// The state's "bedrock" object (package state) overrides those config keys
// and the GUID for that state; [upstream] protocol = "bedrock" sets it to
// the stock server's own.
//
// Strings are cut at a UTF-8 boundary to those caps. A ';' inside a field
// would end it and shift every later field, so each ';' in the state's
// text becomes ':' (the config's edition and game_mode may not hold one).
// Other characters pass through, Minecraft's § formatting codes included.
//
// # Server GUID
//
// A random 64-bit number made once per process, on first use, in
// [1e18, 2^63-1]: always 19 decimal digits, positive whether a client
// reads it signed or unsigned. It stays the same across SIGHUP reloads
// (Build takes it from the package, not from the config) and changes on
// restart, as a Bedrock server's does.
//
// # Sizes and amplification
//
// A pong is 35 bytes of header plus its status string: with the default
// config (edition "MCPE", protocol 766, game mode number 1) and five-digit
// ports,
//
//	reply = 84 + motd + sub-motd + version + game mode + digits(players) + digits(max)
//
// bytes, every string in bytes after its cap; the state's name (the motd)
// weighs most. A 33-byte ping therefore draws 84 + motd + 26 or so bytes
// for a plain server (about 4× for a 20-byte name), and at most 605 bytes
// (18.3×) with every string at its cap, 4,096 players and 65,535 slots;
// the config's own fields at their widest add 18 more, and a state's
// "bedrock" server_id of 20 digits one more (MaxPong, 624 bytes, 18.9×).
// hostile/README.md ("Amplification by state") measures it at three states.
//
// # No challenge, so limits
//
// RakNet's ping cannot prove a source address, so every pong is unproven:
// it draws on the global unproven byte budget (limits.unproven_rate) and
// the per-IP byte budget, and each source (IPv4 address or IPv6 /64) may
// send bedrock.packet_rate pings a second after a burst of packet_burst
// (default 2 a second after 10). packet_rate = 0 turns the rate off.
// Pings over the rate count as rate_limited. [bedrock] is off by default:
// turn it on only for a Bedrock server.
//
// # Fast path
//
// With [xdp] on, the XDP program answers the ping in the driver with the
// pong FastReplies hands it, the ping's time copied in, under the same
// limits as here: bedrock.packet_rate and packet_burst per source (in the
// program's own table, so a source whose pings go to both paths may get
// the rate on each), then the per-IP and the unproven byte budgets (each
// path half of [limits] while the program is attached). A 33-byte datagram
// with the magic and another id goes to the socket path. The program's
// answers count under the same metrics (and in
// queryd_xdp_requests_total{protocol="bedrock"}).
//
// # Config
//
// The bedrock section of queryd.toml (defaults shown; changes apply on
// SIGHUP):
//
//	[bedrock]
//	enabled = false
//	edition = "MCPE"          # 1-16 printable ASCII characters without ';'
//	protocol = 766            # 1 to 1048576; the game compares it with its own
//	game_mode = "Survival"    # when the state has no gamemode; at most 64 bytes, no ';' or control characters
//	game_mode_number = 1      # 0 to 255
//	ipv4_port = 0             # when the state has no game_port; 0: the first listen.udp port
//	ipv6_port = 0             # 0: the IPv4 port
//	packet_rate = 2.0         # pings per second per source; 0 turns the limit off
//	packet_burst = 10
//
// queryd check names the key of any error.
//
// # Metrics
//
//	queryd_requests_total{protocol="bedrock",outcome}   answered, malformed, rate_limited, stale
//	queryd_received_bytes_total{protocol="bedrock"}, queryd_sent_bytes_total{protocol="bedrock"}
//
// docs/metrics.md says what each means and what to watch.
//
// # Client traps
//
//   - gamedig (type mbe, protocol minecraft) also asks Minecraft Java's TCP
//     status and GameSpy4 on the same port, then takes the name, map,
//     counts and version from the pong. It drops a pong that does not echo
//     its time (it sends 11 22 33 44 55 66 77 88) or whose length field is
//     not exactly the bytes that follow, collapses runs of spaces in the
//     name and strips § codes from it, and reads the game mode number as
//     "nintendoOnly".
//   - minecraft-server-util (statusBedrock) shows the motd as the name and
//     the sub-motd joined by a newline, after Minecraft's § formatting
//     (motd.clean strips it), reads the length as a signed 16-bit number and
//     the server GUID as a signed i64, and does a DNS SRV lookup even for an
//     IP unless enableSRV is false.
//   - Both decode the status as UTF-8, so non-ASCII names show as sent;
//     interop/bedrock_test.go checks every field they show.
//
// # Client
//
// queryd query -proto bedrock HOST:PORT sends one ping and prints the pong.
// In Go: [Dial], then [Client.Ping]; Client.Timeout (default 2 s) bounds
// it. The client drops datagrams that are not a pong and pongs that do not
// echo its ping's time (late ones) until the timeout; a pong to its ping
// that is cut short, lacks the magic, has a length field other than the
// bytes that follow, is not UTF-8, or whose status lacks edition to max
// players or a number, or nothing but dropped replies, is a
// [*BadAnswerError]. The ping has no challenge round trip, so this client
// has no ErrOnlyChallenges.
//
// The handler encodes the pong once per state change; a ping costs one copy
// into the responder's buffer (with the ping's time written into it) and no
// allocation.
//
// # Polling a stock server
//
// With [upstream] protocol = "bedrock" (a stock Bedrock Dedicated Server),
// Module.Poll sends one unconnected ping from a socket of the poll's own,
// its time field random: the pong must echo it. FromPong maps the pong:
//
//	state field   pong status string
//	name          motd
//	map           sub-motd
//	version       version
//	max_players   max (a count 0-65535)
//	gamemode      game mode
//	protocol      protocol (SAGL's; when in its range)
//	game_port     IPv4 port
//	players       as many players with empty names as it counts (it names none)
//	bedrock       edition, protocol, server id (server_id; the header's GUID
//	              when it differs is other.header_guid), game mode number,
//	              IPv6 port (not in relay mode: queryd's ports are the game's),
//	              which the front's pong shows; "other" keeps, as text, a value
//	              out of its field's range (max_players, protocol, players,
//	              ipv4_port, server_id, …)
//	rules         none: the pong has no rules
//
// So a front's pong says what the stock server's says: the same status
// string and header GUID. What may differ: a pong of fewer than 12 fields
// (the front sends all 12, the missing ones empty or 0), strings past the
// caps above, a value out of range (kept in "other", the config's shown),
// a header GUID other than the status's server id (the front sends the
// server id in both), ';' in no field, and in relay mode the IPv6 port
// (queryd's own). cmd/queryd/upstream_faithful_test.go compares them field
// by field.
package bedrock
