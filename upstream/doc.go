// Package upstream makes queryd the cache in front of a stock game server
// it cannot change (a Source or GoldSrc game, ioquake3, a Minecraft Java or
// Bedrock server, a Unity/Multiplay SQP server, a SAGL server): queryd asks
// the game server for its state in the game server's own protocol and
// serves that state in every protocol it speaks, with its own challenges
// and byte budgets in front. Query floods then cost the game server
// nothing: it sees one poll every [upstream] interval, whatever the
// clients send.
//
// The package names no protocol. A module that can poll implements
// module.Poller (found by type assertion, as module.FastPath is): its Poll
// asks the game server once and returns a state document and the part
// that went unanswered; [upstream] protocol names such a module, and
// config.Parse refuses a name no registered module polls in, naming those
// that do. Each module's doc.go ("Polling a stock server") says what it
// asks and where each field of the answer goes.
//
// # Config
//
//	[upstream]
//	protocol = "a2s"             # a module that polls: a2s, quake3, gamespy4, bedrock, sqp, sagl; absent: off
//	address  = "127.0.0.1:27016" # the game server; default: [relay] upstream
//	interval = "5s"              # between polls (100ms to 1h)
//	timeout  = "2s"              # per request (10ms to 30s)
//
// A name as address is resolved once, at start (an IPv4 address first);
// an address that is queryd itself (a [listen] udp socket) is refused. A
// change needs a restart. [feed] stale_after must be longer than interval
// plus timeout (queryd check says so). The daemon passes the poller the
// module and the resolved netip.AddrPort, never strings.
//
// # Forged answers
//
// An attacker who can send datagrams with the game server's address as
// their source (on the same LAN, or anywhere on the path when the game
// server is on another host) could once make the state its own: the
// poller kept one socket for its whole life, so a blind spray of the port
// range found it once, and a forged reply queued between polls was read
// as the next answer. Now:
//
//   - every poll opens its own sockets (module.PollConn): a new random
//     source port, connected to the game server (the kernel drops what
//     comes from any other address). A game server on loopback is polled
//     from 127.0.0.1 explicitly: relay mode binds each relayed client's
//     session to another address of 127.0.0.0/8, never 127.0.0.1;
//   - everything that arrived before a request was sent is dropped
//     (module.Drain, before every request);
//   - where the protocol has a nonce it is checked: Quake 3's challenge
//     argument, GameSpy4's session id, SQP's token, Bedrock's ping time
//     (random), SAGL's token (an info part before the request that carries
//     it is dropped; SAGL's replies do not echo it);
//   - A2S_INFO has none: its player count is checked against A2S_PLAYER's
//     list, and when they disagree A2S_INFO is asked again (package a2s);
//   - a reply that cannot be read is dropped and the poll keeps waiting for
//     the real one, so junk costs the poll nothing but time.
//
// What such an attacker can still do: land a forged reply on the poll's
// port in the moment between the request and the real reply (it must
// guess the port among ~28,000, anew every poll, within a round trip),
// which for A2S also needs an INFO consistent with the real PLAYER list,
// or for SAGL a whole JSON; a poll it wins serves the forged state until
// the next poll (one interval). It can also make polls fail by answering
// first with unusable replies, or flood the game server itself. Keep the
// game server on loopback or on a private link that nobody else can send
// on: then none of this is possible.
//
// # From the answer to the state document
//
// Each module's mapping is pure: any answer its client parses maps to a
// valid state document (fuzzed). Strings are made valid UTF-8 (invalid
// bytes become U+FFFD), NUL characters are removed, and each is cut to its
// field's limit (package state; module.DocText); at most 4,096 players and
// 1,024 rules are kept; a rule whose key is empty or longer than 128
// characters is left out, and of a repeated key the first is kept
// (module.DocRules). Nothing the server says is lost, and nothing is
// added: the rules are the server's own (A2S_RULES, Quake 3 cvars,
// GameSpy4's extra keys, SQP's ServerRules) and nothing else; what only
// its protocol carries and no common field takes (A2S_INFO's app id,
// protocol byte and game id; GameSpy4's gametype, game_id, plugins and
// hostip; the Bedrock pong's edition, protocol, server id, game mode
// number and IPv6 port) is that protocol's object in the state ("a2s",
// "gamespy4", "bedrock", package state), which that protocol's replies
// show over its config section's values; and what no field can carry (a
// value out of range, SQP's teams, SAGL's logo hash) is kept as text in
// the object's "other", which no protocol shows.
//
// # Faithful in the server's own protocol
//
// So a front answers in the stock server's own protocol what the stock
// server says: the same fields and values, players and rules, and no
// others. Each module's doc.go ("Polling a stock server") names what may
// still differ and why (a challenge token is the front's own; the rules
// come in key order; what the state cannot carry), and
// cmd/queryd/upstream_faithful_test.go proves it field by field for every
// protocol against a real or stand-in stock server (Debian's
// openarena-server for Quake 3). In the other protocols the front shows
// the common fields and the rules.
//
// When part of a poll goes unanswered
// (A2S_PLAYER or A2S_RULES: many servers turn RULES off) the module names
// the fields it could not fill; their last answers stand in and the poll
// counts as partial.
//
// In relay mode the game port the game server reports (game_port) is left
// out, and so are the address and ports its protocol object carries
// (GameSpy4's hostip, Bedrock's IPv6 port; module.PollOptions.OwnAddress):
// queryd's are the game's.
//
// Player ids: no protocol but SAGL has a stable one (A2S_PLAYER's index is
// 0 for everyone on most Source games); SAGL's players keep theirs
// (module.Polled.OwnIDs). Elsewhere a player is known by its name and
// how many players of the same name come before it in the answer; it keeps
// its id while the answers list it, and a player new to an answer gets
// the next number, so players keep their order and the state's first-seen
// times. A protocol that counts players without naming them (Bedrock) gives
// that many players with empty names.
//
// # Precedence
//
// Each good answer is published with state.Store.SetGameServer: it replaces
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
// reach the game server; everything else is relayed as before. A poll's
// source port is that poll's own socket's, never a client's relay
// session. With [quake3] off, masters' getinfo still go to the game
// server, and the heartbeats probe it as before.
//
// # Status
//
// Poller.Status says what the poller knows (protocol, address, last good
// answer, its round trip, the last error, the part a partial answer
// lacked), for the status page.
//
// # Metrics
//
//	queryd_upstream_polls_total{outcome}  answered, partial, silent, bad_answer, rejected
//	queryd_upstream_answer_age_seconds    since the last good answer (+Inf before the first)
//	queryd_upstream_round_trip_seconds    histogram: a poll's first request to its last reply
//	queryd_upstream_stale                 1 while queryd is silent for want of an answer
package upstream
