// Package state holds the server state document that the game server feeds to
// queryd, its limits and validation, and the immutable Snapshot every protocol
// responder serves. A Store swaps snapshots atomically.
//
// This comment is the state document's reference: every field, its type
// and limit, and which protocols show it. docs/protocols.md has the same
// fields by protocol; the feed messages that carry the document are in
// package feed.
//
// # Base, game server and feed
//
// The [server] section of the config is the base document; what the feed
// sets sits on top. With [upstream] (package upstream), the game server's
// last answer sits between the two: each answer replaces the game server's
// whole layer (absent fields fall back to [server], absent "players" means
// none), and the feed's fields hide it, whole: a feed patch of one player
// makes the player list the feed's from then on. A feed "replace" makes its document the whole feed-set
// layer: absent fields fall back to [server], and absent "players" means no
// players. A "patch" is an RFC 7386 JSON merge patch on the current
// document: null removes a field (a removed top-level field falls back to
// [server]; removed "players" leaves none), so {"players":{"3":null}}
// removes one player. On SIGHUP, [server] fields the feed has not set take
// their new values. Every accepted change publishes a new [Snapshot] whose
// Version is one more; a rejected one changes nothing.
//
// # Fields
//
// Lengths are in Unicode characters unless they say bytes. Every field is
// optional; null means the field's default. Longer text is cut (text shown
// to people) or refused (names that identify something): see Validation.
//
//	field            type and limit                                           used by
//	name             string, at most 256 characters                           every protocol
//	map              string, 128                                              A2S, GameSpy4, Quake 3
//	game             string, 128                                              A2S game
//	folder           string, 128 (refused when longer)                        A2S folder, Quake 3 gamename when quake3.gamename is unset
//	version          string, 128                                              A2S, GameSpy4, Quake 3 status, SAGL "version"
//	max_players      integer 0-65535                                          every protocol (A2S shows at most 255)
//	players          object of id -> player, at most 4,096; ids are decimal   every protocol
//	                 integers 0-4294967295 without leading zeros
//	  name           string, 64                                               (a player's fields)
//	  score          integer, 32-bit signed
//	  ping           integer 0-65535 (ms); a negative integer means unknown
//	                 (bots often send -1); see "Unknown pings"
//	  time           number of seconds connected, 0 to 10 years (optional;    A2S duration
//	                 else counted from when queryd first saw the id)
//	  bot            boolean                                                  A2S bot count, Quake 3 ping 0 and g_humanplayers
//	rules            object of name -> string, number or boolean, at most     A2S_RULES, Quake 3 cvars, GameSpy4 extra keys
//	                 1,024; names at most 128, string values 256 characters
//	values           object, at most 64; names at most 64 characters; each    SAGL "values"
//	                 a string of at most 256, a number, a boolean or null
//	password         boolean                                                  A2S visibility, Quake 3 g_needpass
//	vac              boolean                                                  A2S
//	server_type      "dedicated" (default), "listen" or "proxy"               A2S
//	environment      "linux" (default), "windows" or "mac"                    A2S
//	steam_id         SteamID64 as a string of digits (or a number)            A2S EDF
//	game_port        integer 0-65535 (0: the first listen.udp port)         A2S EDF, GameSpy4 hostport
//	keywords         string, 128 (default: tags joined by commas)             A2S EDF
//	sourcetv         {"port": 1-65535 (required), "name": string, 128}        A2S EDF
//	protocol         integer 0-2147483647                                     SAGL "protocol"
//	description      string, at most 1,000 characters                         SAGL
//	gamemode         string, 128                                              SAGL
//	language         string, 32                                               SAGL
//	tags             array of at most 32 strings of at most 64 characters     SAGL, A2S keywords
//	links            object of name -> http(s) URL, at most 16; names at      SAGL
//	                 most 32 characters, URLs 512
//	branding         {"primary": "#rrggbb" or null, "secondary": ditto,       SAGL
//	                  "show_name": bool, "logo": "name.png"}
//	a2s              {"app_id": 0-65535, "protocol": 0-255, "game_id":       A2S_INFO (over [a2s]'s)
//	                  SteamID-like 64-bit id, "0": none, "other": …}
//	gamespy4         {"gametype", "game_id", "plugins", "hostip": strings   GameSpy4 (over [gamespy4]'s)
//	                  of at most 256, "other": …}
//	bedrock          {"edition": 1-16 characters, "protocol": 0-9999999,    Bedrock pong (over [bedrock]'s)
//	                  "server_id": 64-bit GUID, "game_mode_number": 0-255,
//	                  "ipv6_port": 0-65535, "other": …}
//	sqp, sagl        {"other": …}                                             —
//
// branding.logo is a file path of at most 4,096 characters; from the feed it
// is relative to sagl.logo_dir (package sagl has the rules). Colours are
// kept in lower case.
//
// # Protocol objects
//
// "a2s", "gamespy4", "bedrock", "sqp" and "sagl" hold what only that
// protocol's replies carry and the common fields have no place for; their
// keys mirror the protocol's config section, which they override for this
// state (a member left out or null: the config's), and they are never
// rules. A feeder may set them (a game's own Steam app id: {"a2s":
// {"app_id": 440}}); with [upstream] the polled protocol's object holds
// the stock server's own values, so a front answers in the stock server's
// protocol what the stock server says (package upstream). Each object's
// "other" (text by name, with the rules' limits) keeps what a polled answer
// said that no field can carry; no protocol shows it. A2S's game_id and
// Bedrock's server_id are unsigned 64-bit integers, as numbers or strings
// of digits (as steam_id). Like every top-level field, an object is
// replaced whole by the layer above it: a feed patch of {"a2s":
// {"app_id": 440}} makes the whole "a2s" object the feed's.
//
// # Validation
//
// Unknown fields, wrong types, values out of range, empty keys and strings
// with NUL characters or invalid UTF-8 are refused with an error naming the
// field, e.g.
//
//	state.players.3.score: want an integer from -2147483648 to 2147483647, got 1.5
//	state.mapp: unknown field (did you mean map?)
//
// An unknown field names the nearest known one when one is near (at the
// top level, in a player, in sourcetv and branding), else the fields there
// are. The first error in key order is reported, so the same document
// always gives the same error. A document nesting objects and arrays more
// than 8 levels deep ([MaxDepth]; the schema needs 3) is refused before any
// field is read, in the feed's state and in [server] alike. A refused
// document changes nothing, and its reply carries no warnings.
//
// What real feeders send is accepted in the form queryd keeps:
//
//   - An integer may be written as an integral float: 3.0, 3e0 (Python's
//     json.dumps(3.0)), 30e-1 and -0.0 are 3, 3, 3 and 0, wherever an
//     integer is wanted (max_players, protocol, game_port, steam_id,
//     sourcetv.port, a player's score and ping). The number is read
//     exactly, never through a float: 1.5, 1e-400, 2147483648.0 for a
//     score, 1e19 or 1e400 are refused as above.
//   - A negative ping is unknown (below).
//   - Text shown to people is cut to its limit on a character boundary,
//     with a warning instead of a refusal: name, map, game, version,
//     keywords, gamemode, language, description, sourcetv.name, a
//     player's name, a rule's string value, a string in values, a tag.
//     The limits count Unicode characters (code points); a cut never
//     splits one.
//
// The feed's reply says what was cut, in path order (at most
// [MaxWarningLines] lines, then one for the rest):
//
//	{"ok":true,"version":7,"warnings":["state.players.3.name: cut to 64 characters (was 70)"]}
//
// Names that identify something are refused when too long, since a cut
// one would name something else (two cut keys could even become one): the
// keys of rules, values and links, player ids, folder (the game's folder
// and Quake 3 gamename), link URLs, branding.logo (a file path) and the
// colours. Counts (4,096 players, 1,024 rules, 64 values, 32 tags, 16
// links) are refused when exceeded.
//
// The document keeps each value in the form accepted: the integer, -1 for
// an unknown ping, the cut text. So the feed's "get" returns the document
// queryd serves, a later change does not warn again about a value an
// earlier one fitted, and what a feeder gets back it can send again
// unchanged. [server] is fitted the same way: `queryd check` shows a
// warning for each cut value (server.name: cut to 256 characters …), and
// the daemon serves the cut text.
//
// # Unknown pings
//
// A player's ping is the round trip in milliseconds, 0 when absent. Any
// negative integer means the feeder does not know it (a bot, a player
// still connecting): the Snapshot holds [PingUnknown] and the document -1.
// Each protocol that shows pings says how it shows an unknown one:
//
//	Quake 3 statusResponse   999 (what ioquake3 shows for a client not yet
//	                         active; a bot still shows 0)
//	SAGL JSON                "ping": null
//	SQP PlayerInfo           0 (a u16 has no "unknown")
//	A2S, GameSpy4, Bedrock   show no pings
//	the status page          /status.json "ping": -1, the page "?"
//
// # Players
//
// Players keep the order in which queryd first saw their ids (players new in
// one change are ordered by id); every protocol lists them in that order. A2S
// durations count from a player's "time" when given, else from when queryd
// first saw the id.
package state
