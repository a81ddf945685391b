// Package gamespy4 implements the GameSpy4 query protocol as Minecraft's
// "Query" speaks it (the Minecraft wiki's "Query" page): the handshake that
// hands out a challenge token, and the basic and full stat replies, byte for
// byte in vanilla's order. Replies are encoded once per state snapshot; the
// package opens no sockets except in Client.
//
// This comment is the protocol's reference in queryd: the bytes on the wire,
// the limits, the gamespy4.* config keys, the metrics and what clients do.
// The operator's overview of every protocol is docs/protocols.md.
//
// # Requests
//
// Every request starts with FE FD, then a type byte and a 4-byte session id
// that the reply echoes exactly as received. The token is a big-endian
// int32.
//
//	handshake   FE FD 09 session                      7 bytes or more
//	basic stat  FE FD 00 session token                11 to 14 bytes
//	full stat   FE FD 00 session token padding        15 bytes or more
//
// A stat of 15 bytes or more asks the full stat whatever its padding bytes
// are (clients send 00 00 00 00 or FF FF FF 01); one of 11 to 14 bytes asks
// the basic stat. Bytes after the fields are ignored, so gamedig's 11-byte
// handshake is accepted. Other type bytes and shorter requests are dropped
// as malformed.
//
// # Handshake
//
//	09 session token 00
//
// The token is the shared challenge token (package challenge: a keyed hash
// of the client's IP and the 30-second epoch) mapped into 100000 to
// 2147483647 and written in ASCII decimal: it always has at least 6 digits
// (qstat rejects handshake replies shorter than 12 bytes) and fits an int32.
// The reply is larger than the 7-byte request, so it draws on the global
// unproven budget. A stat with a wrong or expired token (older than the
// previous epoch) gets no reply and counts as ignored.
//
// # Basic stat
//
//	00 session motd\0 gametype\0 map\0 numplayers\0 maxplayers\0 hostport(u16 little-endian) hostip\0
//
// # Full stat
//
//	00 session "splitnum" 00 80 00
//	key\0 value\0   for hostname, gametype, game_id, version, plugins, map,
//	                numplayers, maxplayers, hostport (in decimal), hostip
//	key\0 value\0   for each of the state's rules, in key order
//	00
//	01 "player_" 00 00
//	name\0          for each listed player
//	00
//
// The vanilla keys come first in this order; then the state's rules as extra
// keys. Rules named like a vanilla key or "splitnum", with a control
// character in the name, or whose value holds "\x01player_", are left out.
//
// Where the values come from:
//
//	motd, hostname   state name, at most 256 bytes
//	gametype         state gamespy4.gametype, else gamespy4.gametype ("SMP"), at most 32 bytes
//	game_id          state gamespy4.game_id, else gamespy4.game_id ("MINECRAFT"), at most 32 bytes
//	version          state version, at most 64 bytes
//	plugins          state gamespy4.plugins, else gamespy4.plugins (""), at most 256 bytes
//	map              state map, at most 128 bytes
//	numplayers       every player of the state
//	maxplayers       state max_players
//	hostport         state game_port, else gamespy4.hostport, else the first listen.udp port
//	hostip           state gamespy4.hostip, else gamespy4.hostip, else the IP of the first listen.udp address
//
// Strings are cut at a UTF-8 boundary to those caps. The state's
// "gamespy4" object (package state) overrides the config's gametype,
// game_id, plugins and hostip for that state; [upstream] protocol =
// "gamespy4" sets it to the stock server's own.
//
// # One datagram
//
// A reply is at most gamespy4.max_packet bytes (default 1,024, the most
// minequery reads). The vanilla keys always fit; then as many players as
// fit, in the state's order (the order queryd first saw their ids); then
// rules until one does not fit. numplayers always counts every player, so
// the list can be shorter. With names of 16 characters and a short motd,
// about 48 players fit in 1,024 bytes, about 75 in 1,472.
//
// # Text
//
// UTF-8, as vanilla sends it (gamedig shows it as windows-1252,
// minecraft-server-util as latin-1). NUL bytes are removed from every value
// (the state already refuses them); players whose name is empty, or only
// white space (spaces, tabs, U+00A0, U+3000 …), are left out of the list
// (an empty name would end it, and so would a blank one for the clients
// that trim names); numplayers still counts them.
//
// # Config
//
// The gamespy4 section of queryd.toml (defaults shown; changes apply on
// SIGHUP):
//
//	[gamespy4]
//	enabled = true
//	gametype = "SMP"        # strict clients such as minequery require exactly these two
//	game_id = "MINECRAFT"
//	plugins = ""            # "" like vanilla, or "<software>: <plugin> <version>; ..."
//	hostport = 0            # when the state has no game_port; 0: the first listen.udp port
//	hostip = ""             # "": the first listen address's IP; set the public IP when listening on 0.0.0.0
//	max_packet = 1024       # 1,024 to 8,192 bytes; 1,472 avoids IP fragmentation on Ethernet
//
// gametype, game_id and plugins may hold no control characters; hostip must
// be an IP address without a zone. queryd check names the key of any error.
//
// # Metrics
//
// queryd_requests_total{protocol="gamespy4",outcome}: answered (a stat),
// challenged (a handshake), ignored (a wrong or expired token), malformed,
// rate_limited, stale. queryd_received_bytes_total and
// queryd_sent_bytes_total{protocol="gamespy4"}. docs/metrics.md has them
// all.
//
// # Client traps
//
//   - minequery parses hostport as a signed 16-bit number, so ports above
//     32767 fail; mcutils reads it as int16 too.
//   - gamedig's gamespy3 protocol normalises mapname and gamever, not map
//     and version (find those in its raw output).
//   - minecraft-server-util waits for ever for a missing trailing hostip in
//     the basic stat and needs plugins in the full stat; minequery needs
//     plugins and hostip. queryd always sends every vanilla key.
//   - qstat uses the session id 10203040; other clients mask theirs with
//     0x0F0F0F0F. The session is echoed as received either way.
//
// # Client
//
// queryd query -proto gamespy4 HOST:PORT asks the basic and the full stat,
// each after a handshake. In Go: [Dial], then [Client.Handshake],
// [Client.Basic] and [Client.Full]; Client.Timeout (default 2 s) bounds each
// request. A stat answered with a new handshake token is asked again with
// it, up to 3 tokens in all, then fails with [ErrOnlyChallenges]. Replies of
// another type or session id are dropped until the timeout; a token that is
// not a decimal int32, a string without its NUL, bytes after the reply, or
// nothing but dropped replies are a [*BadAnswerError].
//
// The handler encodes both stats once per state change; a query costs one
// copy into the responder's buffer (behind the client's session id) and no
// allocation.
//
// # Polling a stock server
//
// With [upstream] protocol = "gamespy4" (a stock Minecraft Java server with
// enable-query=true in server.properties, its query.port), Module.Poll asks
// the handshake and the full stat from a socket of the poll's own with a
// random session id (masked with 0x0F0F0F0F); replies with another session
// id are dropped. FromFull maps the full stat:
//
//	state field   full stat
//	name          hostname
//	map           map
//	version       version
//	game          game_id ("MINECRAFT")
//	gamespy4      gametype, game_id, plugins, hostip (not hostip in relay mode:
//	              queryd's address is the game's), which the front's replies show
//	max_players   maxplayers (a count 0-65535; else a rule)
//	game_port     hostport (1-65535; else a rule)
//	rules         every other key (the server's extra keys); numplayers
//	              only when it counts more players than the list names
//	players       the player section's names
//
// So a front answers the basic and full stat as the stock server does: the
// same vanilla keys and values, extra keys and player names. What may
// differ: the handshake's challenge token (the front's own), the extra
// keys' order (key order), strings past the caps above (cut), a numplayers
// that counts more than the list (a stock reply cut to one datagram; the
// front counts the list it got), blank player names (the front leaves them
// out) and, in relay mode, hostport and hostip (queryd's own).
// cmd/queryd/upstream_faithful_test.go compares them field by field.
package gamespy4
