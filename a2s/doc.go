// Package a2s implements Valve's A2S server queries (A2S_INFO, A2S_PLAYER,
// A2S_RULES, A2A_PING, A2S_SERVERQUERY_GETCHALLENGE) as described on the Valve
// Developer Community page "Server queries": parsing requests, encoding the
// replies once per state snapshot, and a small client. It opens no sockets
// except in Client.
//
// This comment is the protocol's reference in queryd: the bytes on the wire,
// the limits, the a2s.* config keys, the metrics and what clients do. The
// operator's overview of every protocol is docs/protocols.md.
//
// # Requests
//
// Every request starts with FF FF FF FF and a type byte. Integers are
// little-endian; a token is the 4-byte challenge, -1 (FF FF FF FF) when the
// client has none. Bytes after a request's fields are accepted and ignored,
// as Valve's page asks.
//
//	A2S_INFO      FF FF FF FF 54 "Source Engine Query\0" [token]   25 bytes, 29 with the token
//	A2S_PLAYER    FF FF FF FF 55 token                             9 bytes
//	A2S_RULES     FF FF FF FF 56 token                             9 bytes
//	GETCHALLENGE  FF FF FF FF 57 [NUL padding]                     deprecated
//	A2A_PING      FF FF FF FF 69 [NUL padding]                     deprecated
//	compat INFO   FF FF FF FF 54 "SOURCE\0" [token]                the steamlogger client
//	compat retry  FF FF FF FF 41 token                             exactly 9 bytes
//
// The responder hands A2S every datagram that starts FF FF FF FF 54, 55 or
// 56. It claims 57 and 69 only when nothing but NUL bytes follows the type
// byte, and 41 only at exactly 9 bytes, so that other connectionless packets
// on a shared port, such as Quake 3's "ipAuthorize …", reach the relay
// untouched. A claimed datagram that does not parse (an A2S_INFO without its
// payload, a PLAYER or RULES shorter than 9 bytes, a compat form while
// a2s.compat is off) is dropped as malformed.
//
// # Challenge
//
// A2S_PLAYER and A2S_RULES need a challenge; A2S_INFO needs one too unless
// a2s.info_challenge = false (then its reply goes at once and draws on the
// global unproven budget). A request without a valid token gets only the
// 9-byte challenge
//
//	FF FF FF FF 41 token(u32)
//
// which is never larger than the request (the A2S_INFO request is 25 bytes).
// The token is the shared challenge token (package challenge): a keyed hash
// of the client's IP, not its port, and the 30-second epoch; the current and
// the previous epoch's tokens are valid, so a token lives 30 to 60 seconds;
// -1 is never valid.
//
// A2A_PING and A2S_SERVERQUERY_GETCHALLENGE answer more bytes than their
// 5-byte requests, so they are answered only when the request is padded to
// the reply's size (GETCHALLENGE to 9 bytes, the challenge; A2A_PING to 6,
// FF FF FF FF 6A 00), unless a2s.legacy_requests = true. Unpadded, they
// count as ignored.
//
// The compat retry FF FF FF FF 41 token (with a2s.compat, on by default)
// is answered with the A2S_INFO reply when the token is valid, else with a
// new challenge.
//
// # A2S_INFO reply
//
// One datagram, never split. Strings end with a NUL and are cut at a UTF-8
// boundary to the byte caps below, so that A2S_INFO always fits one
// 1,400-byte packet.
//
//	FF FF FF FF 49
//	protocol      u8       state a2s.protocol, else a2s.protocol (17)
//	name          string   state name, at most 256 bytes
//	map           string   state map, 128 bytes
//	folder        string   state folder, 64 bytes
//	game          string   state game, 128 bytes
//	app id        u16      state a2s.app_id, else a2s.app_id (480)
//	players       u8       the players A2S_PLAYER lists (see Listed)
//	max players   u8       state max_players, at most 255
//	bots          u8       listed players with "bot": true
//	server type   u8       'd', 'l' or 'p' (state server_type: dedicated, listen, proxy)
//	environment   u8       'l', 'w' or 'm' (state environment: linux, windows, mac)
//	visibility    u8       1 when state password is true
//	VAC           u8       1 when state vac is true
//	version       string   state version, 64 bytes
//	EDF           u8       the extra data flags, always present
//	port          u16      EDF 0x80, always: state game_port, else a2s.game_port, else the first listen.udp port
//	SteamID       u64      EDF 0x10, when state steam_id is set
//	SourceTV      u16 + string  EDF 0x40, when state sourcetv is set (name at most 128 bytes)
//	keywords      string   EDF 0x20, when state keywords or tags are set (tags joined by commas), 256 bytes
//	GameID        u64      EDF 0x01, when state a2s.game_id (else a2s.game_id) is not 0
//
// # A2S_PLAYER and A2S_RULES replies
//
//	A2S_PLAYER    FF FF FF FF 44 count(u8), then per player:
//	              index(u8) name(string, at most 256 bytes) score(i32) duration(f32, seconds)
//	A2S_RULES     FF FF FF FF 45 count(u16), then per rule: name(string) value(string)
//
// Players come in the order queryd first saw their ids; a duration counts
// from the player's "time" when the feed gave one, else from when queryd
// first saw the id. The PLAYER reply is re-encoded at most once a second
// (its durations move with the clock), never per query. Rules come in key
// order.
//
// The INFO player count equals the number of players A2S_PLAYER lists: at
// most 255 (the count is one byte), and no more than fit in 15 split
// fragments; the rest are left out. Rules that would take the RULES reply
// past 15 fragments are cut short. Nothing is compressed.
//
// # Split replies
//
// A reply over 1,400 bytes is split in the Source layout, each fragment
//
//	FE FF FF FF id(u32) total(u8) number(u8) size(u16 = 1,248) payload
//
// carrying up to 1,248 bytes of the reply (its FF FF FF FF header included),
// numbered from 0, at most 15 fragments (18,720 bytes): some clients
// (github.com/woozymasta/a2s) read the fragment count from 4 bits, as in the
// GoldSrc layout. The split id has bits 31 (compressed) and 15 clear
// (python-a2s reads bit 15 as "compressed"). On the batch socket layer the
// fragments of one reply leave as one UDP GSO send (listen.gso).
//
// # Config
//
// The a2s section of queryd.toml (defaults shown; changes apply on SIGHUP):
//
//	[a2s]
//	enabled = true
//	app_id = 480            # A2S_INFO app id, 0-65535; 480 is Valve's public Steamworks test app ("Spacewar")
//	game_id = 0             # EDF GameID (64-bit); 0 leaves the field out; a Steam app id over 65535 goes here
//	protocol = 17           # A2S_INFO protocol byte, 0-255
//	info_challenge = true   # A2S_INFO needs a challenge, as on current Source servers
//	compat = true           # answer the steamlogger client's "SOURCE\0" request and its 'A' retry
//	legacy_requests = false # answer unpadded 5-byte A2A_PING and GETCHALLENGE
//	game_port = 0           # EDF port when the state has no game_port; 0: the first listen.udp port
//
// The app id matters to qstat: it reads split replies in the old GoldSrc
// layout when the app id's low byte is below 200, and then shows no players
// and no rules. 480's low byte is 224; queryd check warns about app ids
// whose low byte is below 200. The Steam master server filters by app id,
// so a game listed there sets its own (docs/troubleshooting.md).
//
// The state's "a2s" object (package state) overrides app_id, protocol and
// game_id for that state: a feeder may set them, and [upstream] protocol =
// "a2s" sets them to the stock server's own (its app id's low byte then
// matters to qstat as it does with the stock server). They are never
// rules.
//
// # Metrics
//
// queryd_requests_total{protocol="a2s",outcome}: answered, challenged,
// malformed, ignored (an unpadded legacy request), rate_limited, stale.
// queryd_received_bytes_total and queryd_sent_bytes_total{protocol="a2s"};
// queryd_gso_sends_total counts split replies sent as one GSO send.
// docs/metrics.md has them all.
//
// # Client traps
//
// Seen with real clients (interop/ checks qstat, gamedig, rumblefrog/go-a2s
// and woozymasta/a2s against the daemon):
//
//   - qstat (quakestat -a2s) needs the app id's low byte at 200 or more to
//     read split replies (see Config); it reuses the INFO challenge for
//     PLAYER and RULES, and exits 0 even when the server does not answer.
//   - woozymasta/a2s fails without the EDF byte (queryd always sends it)
//     and reads the fragment count from 4 bits (hence 15 fragments at most).
//   - gamedig (valve) counts as bots the N players with the longest
//     connection times, N being the INFO bot count.
//   - rumblefrog/go-a2s reads at most 1,400 bytes per datagram.
//
// # Client
//
// queryd query -proto a2s HOST:PORT asks A2S_INFO, A2S_PLAYER and A2S_RULES
// and prints them as JSON. In Go: [Dial], then [Client.Info],
// [Client.Players] and [Client.Rules]. Client.Timeout (default 2 s) bounds
// each call, its challenge rounds included. A call answers at most 3
// challenges, then fails with [ErrOnlyChallenges] ("answers only with
// challenges"). Replies of another type and split fragments of another
// reply (a stale or duplicated one) are dropped, and the client keeps
// reading until the timeout; it keeps at most 4 split replies in progress
// and 1 MiB of their fragments, dropping the oldest beyond that.
//
// It reads split replies in the Source layout, with or without the u16
// size field (old engines leave it out: the first fragment tells, by where
// its FF FF FF FF starts), and bzip2-compressed ones (bit 31 of the split
// id, old Source engines): the first fragment's declared size is checked
// against [MaxDecompressed] (256 KiB) before anything is decompressed, no
// more than it is read, and the CRC32 the fragment carries must match. It
// reads GoldSrc's layout too (the number and the count in one byte, high
// and low nibble): a reply is complete when its fragments number 0 to
// count-1 in one of the layouts and its first starts a reply there.
//
// What it cannot use is a [*BadAnswerError]: a reply cut short or a string
// without its NUL, a compressed split reply over the cap, whose bzip2
// stream is broken or whose size or CRC32 does not match, and at the
// timeout a split reply that never completed ("incomplete split reply") or
// nothing but dropped replies.
//
// # Polling a stock server
//
// With [upstream] protocol = "a2s", Module.Poll asks A2S_INFO, A2S_PLAYER
// and A2S_RULES from a socket of the poll's own (package upstream). A2S_INFO
// must answer; an unanswered A2S_PLAYER or A2S_RULES leaves "players" or
// "rules" to their last answers (a partial poll). A2S_INFO has no nonce:
// when its player count disagrees with A2S_PLAYER's list, A2S_INFO is asked
// again, and the poll stands only when the second agrees with the list or
// is the first again (a server whose counts differ by design); otherwise
// it is a bad answer. FromA2S maps the answer:
//
//	state field        A2S
//	name               INFO name
//	map                INFO map
//	folder             INFO folder
//	game               INFO game
//	version            INFO version
//	max_players        INFO max players
//	password           INFO visibility
//	vac                INFO VAC
//	server_type        INFO server type (d, l, p)
//	environment        INFO environment (l, w, m or o)
//	game_port          EDF port (not in relay mode: queryd's port is the game's)
//	steam_id           EDF SteamID
//	sourcetv           EDF SourceTV port and name
//	keywords           EDF keywords
//	rules              A2S_RULES, and nothing else
//	a2s                INFO protocol, app id and EDF game id (game_id "0": none),
//	                   which the front's A2S_INFO shows instead of [a2s]'s
//	players            A2S_PLAYER name, score, duration as "time"; the INFO bot
//	                   count marks the players connected longest as bots
//
// The INFO player count is the players' list's business. So a front
// answers A2S as the stock server does: the same INFO (app id, protocol
// and game id included), players (durations move with the clock between
// the two answers) and rules. What differs: the challenge tokens (the
// front's own), the rules' order (key order: the state keeps no other),
// the EDF game port when the stock server sends none (the front always
// sends one), an environment 'o' (sent back as 'm'), an INFO player count
// that disagrees with A2S_PLAYER by design (the front counts the list),
// A2S_PLAYER's index byte (the front numbers its players 0, 1, …; most
// Source servers send 0 for everyone) and strings past the byte caps
// above. cmd/queryd/upstream_faithful_test.go compares them field by
// field.
package a2s
