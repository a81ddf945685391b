// Package sqp implements Unity's Server Query Protocol (SQP), as
// Unity/Multiplay game servers answer it and their Go client
// (github.com/multiplay/go-svrquery) reads it: a challenge, then one query
// for any combination of the ServerInfo, ServerRules, PlayerInfo, TeamInfo
// and Metrics chunks, answered in one or several packets. Replies are
// encoded once per state snapshot; the package opens no sockets except in
// Client.
//
// This comment is the protocol's reference in queryd: the bytes on the wire,
// the limits, the sqp.* config keys, the metrics and what clients do. The
// operator's overview of every protocol is docs/protocols.md.
//
// # Encoding
//
// Integers are unsigned and big-endian. A string is a u8 byte length, then
// that many bytes of UTF-8; queryd cuts longer text at a character boundary
// to at most 255 bytes.
//
// # Requests
//
// SQP requests have exact sizes, and queryd claims a datagram only in
// exactly these shapes:
//
//	challenge   00 00 00 00 00                          exactly 5 bytes
//	query       01 token(u32) version(u16) chunks(u8)   exactly 8 bytes, version 1
//
// The first bytes alone (00, 01) are too weak to tell SQP from other
// traffic, so any other datagram is left to the other protocols, or to the
// game server in relay mode. That is also why SQP is off by default: turn it
// on only when the game's own traffic (in relay mode) never has these
// shapes; queryd check warns about SQP in relay mode.
//
// The chunks byte asks for chunks by bit: 0x01 ServerInfo, 0x02
// ServerRules, 0x04 PlayerInfo, 0x08 TeamInfo, 0x10 Metrics. A query with a
// higher bit set is dropped as malformed (a client would misread a reply
// without the chunk it asked for); 0 gets a reply with an empty payload.
//
// # Challenge
//
//	00 token(u32)                                        5 bytes
//
// The token is the shared challenge token (package challenge: a keyed hash
// of the client's IP and the 30-second epoch; never 0), sent as it is. The
// reply is exactly as large as the request, so a spoofed challenge request
// reflects 1.0 times its size and never draws on the unproven budget. A
// query with a wrong or expired token (older than the previous epoch) gets
// no reply at all and counts as ignored.
//
// # Query reply
//
// Every packet of a reply starts with an 11-byte header:
//
//	01 token(u32) version(u16 = 1) current(u8) last(u8) length(u16)
//
// token is the query's; current is the packet's number from 0, last the
// number of the last packet, length the size of the payload that follows
// in this packet. The payload of all packets, joined in order, is the
// requested chunks in bit order, each starting with its u32 length (the
// bytes after it). A packet is at most 1,472 bytes (1,461 of payload), so
// a chunk may continue in the next packet, even within a string.
//
// ServerInfo:
//
//	u16 current players   every player of the state (at most 4,096)
//	u16 max players       state max_players
//	str server name       state name
//	str game type         state gamemode, else sqp.game_type
//	str build id          state version
//	str map               state map
//	u16 port              state game_port, else sqp.game_port, else the first listen.udp port
//
// ServerRules: for each of the state's rules, in key order: str key, u8
// type, value. The type follows the (string) rule value:
//
//	"true", "false"                           0 (u8): 1, 0
//	digits, no sign or leading zero, < 2^16   1 (u16)
//	... < 2^32                                2 (u32)
//	... < 2^64                                3 (u64)
//	anything else (text, "-5", "1.5", "007")  4 (string)
//
// u8 is kept for booleans, so a client can tell true from 1. The state
// keeps rules as text, so the boolean rule true and the string "true" are
// the same. Rules whose key is longer than 255 bytes are left out (a cut
// key would be another key); values are cut.
//
// PlayerInfo: u16 player count, u8 field count (3), the fields (str name,
// u8 type), then per player one value per field, without type bytes:
//
//	name    4 (string)   the player's name
//	score   2 (u32)      the int32 score as its two's complement bits:
//	                     -1 is 4294967295; read it as int32
//	ping    1 (u16)      milliseconds; 0 when unknown (a negative ping in
//	                     the state): the u16 has no value for "unknown"
//
// Players come in the state's order (the order queryd first saw their ids).
//
// TeamInfo: the state has no teams, so it is always 00 00 00 03 00 00 00:
// 0 teams, 0 fields. Metrics: always empty (00 00 00 00).
//
// # Size
//
// One reply is at most 22 packets (32,142 bytes of chunks): every packet
// carries the client's token, so the whole reply is written into the
// responder's 32 KiB scratch buffer (dgram.ScratchSize) per query. ServerInfo, TeamInfo and
// Metrics always fit. When the rules and players asked for do not fit,
// they are cut short in their order, never a record in half: asked alone,
// a list takes all the room; asked together, the rules keep at most half of
// the room the other chunks leave (or all that the players do not need) and
// the players take the rest. The player count of PlayerInfo is the number
// listed; ServerInfo's current players is always every player. With
// 16-byte names a reply lists 1,396 players when they are asked alone.
//
// # Fast path
//
// With [xdp] on, the XDP program answers in the driver (FastReplies hands
// it the bytes): the challenge, with the source's token written in, and a
// query with a valid token for each chunks byte whose reply is one
// datagram, with the query's token copied into the header. A query with a
// wrong or expired token, unknown chunk bits or a reply of several
// datagrams goes to the socket path, which answers it as above. The
// program's answers count under the same metrics (and in
// queryd_xdp_requests_total{protocol="sqp"}).
//
// # Config
//
// The sqp section of queryd.toml (defaults shown; changes apply on SIGHUP):
//
//	[sqp]
//	enabled = false     # on in the embedded demo config
//	game_type = ""      # ServerInfo game type when the state has no gamemode; at most 255 bytes
//	game_port = 0       # ServerInfo port when the state has no game_port; 0: the first listen.udp port
//
// # Metrics
//
// queryd_requests_total{protocol="sqp",outcome}: answered (a query),
// challenged (a challenge request), ignored (a wrong or expired token),
// malformed (unknown chunk bits), rate_limited, stale.
// queryd_received_bytes_total and queryd_sent_bytes_total{protocol="sqp"}.
// docs/metrics.md has them all.
//
// # Client traps
//
//   - go-svrquery reads each packet into a 1,472-byte buffer: a larger
//     packet would be cut, so queryd never sends one.
//   - go-svrquery checks the token of every packet of a reply, and fails on
//     a packet with another one rather than skipping it.
//   - go-svrquery knows no Metrics chunk (it ignores the bit) and shows the
//     score as the unsigned number queryd sends.
//   - go-svrquery skips a PlayerInfo or TeamInfo chunk with a count of 0
//     without reading its field header.
//
// # Client
//
// queryd query -proto sqp HOST:PORT asks for a challenge, then every chunk
// in one query. In Go: [Dial], then [Client.Challenge] and [Client.Query]
// with the chunk bits; Client.Timeout (default 2 s) bounds each request.
// The client reassembles a reply from packets in any order (duplicates
// ignored) up to [MaxClientPayload] bytes. A query answered with a new
// challenge is asked again with it, up to 3 tokens in all, then fails with
// [ErrOnlyChallenges]. Datagrams of another type or token are dropped until
// the timeout; packets that contradict each other, a chunk longer than the
// payload, a value cut short, an unknown data type, a string that is not
// UTF-8, or nothing but dropped datagrams are a [*BadAnswerError]. Bytes
// after a chunk's known fields are ignored, as the protocol asks.
//
// The handler encodes the chunks once per state change and plans each of
// the 31 combinations; a query costs one copy of its chunks into the
// responder's buffer (behind headers with the client's token) and no
// allocation.
//
// # Polling a stock server
//
// With [upstream] protocol = "sqp" (a Unity/Multiplay server), Module.Poll
// asks a challenge, then ServerInfo, ServerRules, PlayerInfo and TeamInfo,
// from a socket of the poll's own; every packet must carry the challenge's
// token. FromResponse maps the reply:
//
//	state field   SQP
//	name          ServerInfo server name
//	gamemode      ServerInfo game type
//	version       ServerInfo build id
//	map           ServerInfo map
//	game_port     ServerInfo port (when not 0)
//	max_players   ServerInfo max players
//	rules         ServerRules (u8 0 and 1 as "false" and "true", other numbers
//	              in decimal), and nothing else
//	players       PlayerInfo's name, score (u32 read as int32) and ping;
//	              without PlayerInfo, as many unnamed players as ServerInfo counts
//	sqp           "other" keeps, as text, what the state has no place for:
//	              teams (TeamInfo's count), team.<i>.<field> (each team's
//	              fields), player.<i>.<field> (PlayerInfo's other fields)
//
// So a front answers ServerInfo, ServerRules and PlayerInfo as the stock
// server does: the same values, players and rules. What may differ: the
// challenge token (the front's own), the rules' order (key order) and a
// rule's number type (the state keeps text: the front picks the type by
// the value, so a u32 5 comes back as a u16 5, a u8 7 as a u16), a
// ServerInfo port of 0 (the front sends [sqp] game_port or its own),
// PlayerInfo's fields other than name, score and ping, and TeamInfo (the
// state has no teams: the front sends none; both kept in sqp.other).
// cmd/queryd/upstream_faithful_test.go compares them field by field.
package sqp
