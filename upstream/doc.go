// Package upstream makes queryd the cache in front of a stock game server
// it cannot change (a Source or GoldSrc game, ioquake3, Enemy Territory):
// queryd asks the game server for its state in the game server's own
// protocol, from a UDP socket of its own, and serves that state in every
// protocol it speaks, with its own challenges and byte budgets in front.
// Query floods then cost the game server nothing: it sees one poll every
// [upstream] interval, whatever the clients send.
//
// # Config
//
//	[upstream]
//	protocol = "a2s"           # or "quake3"; absent: off
//	address  = "127.0.0.1:27016" # the game server; default: [relay] upstream
//	interval = "5s"            # between polls (100ms to 1h)
//	timeout  = "2s"            # per request (10ms to 30s)
//
// A name as address is resolved once, at start (an IPv4 address first);
// an address that is queryd itself (a [listen] udp socket) is refused. A
// change needs a restart. [feed] stale_after must be longer than interval
// plus timeout (queryd check says so).
//
// # What is asked
//
// a2s: A2S_INFO, then A2S_PLAYER, then A2S_RULES, each with the challenge
// dance and split replies (package a2s's client: Source split replies with
// or without the size field, bzip2-compressed ones decompressed with the
// declared size capped at 256 KiB and the CRC32 checked; a reply over the
// cap is refused and logged). A2S_INFO must answer; when A2S_PLAYER or
// A2S_RULES does not (many servers turn RULES off), their last answers
// stand in and the poll counts as partial. GoldSrc's own split layout
// (count and number in one byte) is not read: a GoldSrc server whose
// A2S_PLAYER or A2S_RULES needs several packets answers partially.
//
// quake3: "getstatus <random challenge>"; the reply must echo the
// challenge (a late reply to an earlier poll is dropped).
//
// # From the answer to the state document
//
// FromA2S and FromQuake3 are pure: any answer the clients parse maps to a
// valid state document (fuzzed). Strings are made valid UTF-8 (invalid
// bytes become U+FFFD), NUL characters are removed, and each is cut to
// its field's limit (package state); at most 4,096 players and 1,024 rules
// are kept; a rule whose key is empty or longer than 128 characters is left
// out, and of a repeated key the first is kept.
//
//	state field        A2S                           Quake 3 statusResponse
//	name               INFO name                     sv_hostname (else hostname)
//	map                INFO map                      mapname
//	folder             INFO folder                   gamename
//	game               INFO game                     com_gamename (also kept as a rule)
//	version            INFO version                  version
//	max_players        INFO max players              sv_maxclients (a count 0-65535; else a rule)
//	password           INFO visibility               g_needpass (not "" or "0")
//	vac                INFO VAC                      -
//	server_type        INFO server type              -
//	environment        INFO environment              -
//	game_port          EDF port (not in relay mode:  -
//	                   queryd's port is the game's)
//	steam_id           EDF SteamID                   -
//	sourcetv           EDF SourceTV port and name    -
//	keywords           EDF keywords                  -
//	rules              A2S_RULES, and INFO protocol, every other key
//	                   app id and EDF game id as
//	                   a2s_protocol, a2s_app_id,
//	                   a2s_game_id
//	players            A2S_PLAYER name, score,       each line's name, score,
//	                   duration as "time"            ping (0 to 65535)
//
// A field the state has no place for stays in the rules, so nothing the
// server says is lost; the keys that became fields are left out of the
// rules (every protocol shows them under its own names), and Quake 3's
// challenge is dropped. The front's A2S app id is [a2s] app_id, not the
// game server's: set it to the game's (a2s_app_id shows the server's).
//
// Bots: Quake 3 players with ping 0 are bots (ioquake3 gives its bots ping
// 0). A2S_PLAYER does not say which players are bots: the INFO bot count
// marks the players connected longest (gamedig's rule), so the front's
// INFO bot count is the game server's.
//
// Player ids: neither protocol has a stable one (A2S_PLAYER's index is 0
// for everyone on most Source games). A player is known by its name and
// how many players of the same name come before it in the answer; it keeps
// its id while the answers list it, and a player new to an answer gets
// the next number, so players keep their order and the state's first-seen
// times (Quake 3 has no durations: they count from the first answer that
// listed the player). A2S durations come from A2S_PLAYER's duration.
//
// # Precedence
//
// Each good answer is published with state.Store.SetUpstream: it replaces
// the store's upstream layer, which sits over [server] (fields the answer
// lacks fall back to it) and under the feed. A feed may still run beside
// the upstream: what it sets hides the upstream's field, whole (a patch of
// one player makes the player list the feed's until the feed removes it,
// "players": null, which leaves no players). An answer identical to the
// last one publishes nothing (no new version).
//
// # Freshness
//
// [feed] stale_after applies to the game server as to the feed: queryd is
// silent (no protocol answers anything, /healthz says 503, masters get
// their flatline) while the feed is stale, or while the game server has
// not answered well for stale_after, or has not answered at all since
// queryd started — unlike the feed, which counts only once it has spoken:
// queryd would otherwise serve [server] (a state nobody measured) for a
// game server that is down. It speaks again at the next good answer. With
// stale_after = "0s" queryd is never silent. An answer that cannot be read,
// or that the state refuses, keeps the previous state and is logged (at
// most 3 lines at once, then one a minute, with the count of lines left
// out); it is not a good answer.
//
// # With the relay
//
// In relay mode ([relay] upstream set; address defaults to it) the queries
// of the protocols queryd answers are served from the cache and never
// reach the game server; everything else is relayed as before. The poll's
// source port is the poller's own socket's, never a client's relay
// session. With [quake3] off, masters' getinfo still go to the game
// server, and the heartbeats probe it as before.
//
// # Metrics
//
//	queryd_upstream_polls_total{outcome}  answered, partial, silent, bad_answer, rejected
//	queryd_upstream_answer_age_seconds    since the last good answer (+Inf before the first)
//	queryd_upstream_round_trip_seconds    histogram: a poll's first request to its last reply
//	queryd_upstream_stale                 1 while queryd is silent for want of an answer
package upstream
