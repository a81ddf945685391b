// Package agones takes a game server's state from Agones, with no code in
// the game: a game server run by Agones already tells Agones what it is
// doing through its SDK (Ready, Allocate, Shutdown, labels, annotations,
// the players Counter and List), and the SDK server beside it in the pod
// serves that GameServer over a local REST API. A Watcher reads it there
// with plain net/http (no Kubernetes API access, no Agones module), maps
// each GameServer to a state document and a class (answer, not yet,
// silent), and hands both to the daemon. The package names no protocol.
//
// # Config
//
//	[agones]                    # its presence turns it on
//	enabled = true              # false: written but off
//	sdk = "localhost:9358"      # the SDK server's HTTP address; default "localhost:" + $AGONES_SDK_HTTP_PORT, else localhost:9358
//	players_list = "players"    # the List whose values are the players' names; "": none
//	players_counter = "players" # the Counter counted when there is no such List; "": none
//	port_name = "default"       # the status port whose number is game_port; "": none
//	timeout = "2s"              # connect, answer, a begun line's end (100ms to 30s)
//	interval = "500ms"          # between two GET /gameserver (100ms to 1m)
//
// Agones sets AGONES_SDK_HTTP_PORT in the containers of a GameServer's
// pod, so [agones] alone is enough in a sidecar. interval plus timeout
// must be under [feed] stale_after. A change needs a restart. In host
// mode each server file has its own [agones] (its own SDK server). With
// [upstream] on it is refused (key "agones"): the GameServer is the
// state's upstream layer, over [server] and under the feed, which a poller
// of the game server would make too. A feeder may run beside it: each
// top-level field the feed sets is the feed's (state.Store).
// [Config] is the section's type; register it with package config through
// [ConfigModule].
//
// # Reading
//
// The watcher keeps GET /watch/gameserver open: the SDK server sends one
// line {"result": <GameServer>} at once (the GameServer as it is) and one
// more after every change (64-bit integers arrive as JSON strings, "16").
// When the stream ends (the SDK server restarted, or sent an error line)
// or cannot be opened, it is opened again after a back-off: from 50-100ms,
// doubling, to 1-2s (each wait drawn in the upper half of its step), back
// to the start once a stream has stayed open for 2s. Beside the stream it
// asks GET /gameserver every interval: that answer proves the SDK server
// still answers while nothing changes, and it brings what the stream does
// not send: the SDK server in local mode (agones' own sdk-server --local,
// the one the tests run) sends no line for a Counter or List change. An
// answer asked before a stream line was applied is not applied (it may be
// the older); it still counts as a read.
//
// Bounds: a line, or an answer to GET /gameserver, longer than [MaxLine]
// (1 MiB) is refused and skipped as it arrives, never held whole: a
// stream holds at most MaxLine+1 bytes of buffer, 4 KiB while its lines
// are short. A line that has begun must end within timeout (a stream that
// sends spaces forever, or half a line and then nothing, is dropped and
// opened again). A line that is not JSON, JSON that is not a GameServer
// as the SDK sends it (no "result", no status, a number that is not a
// 64-bit integer, a list of other things than strings), or an error the
// SDK server sent, is refused: counted by reason, logged (3 lines, then
// one a minute), and nothing changes. A GameServer is applied whole or
// not at all: the document is published (Options.Publish) and, only when
// that succeeds, the class and the player ids change with it. Unknown
// fields are ignored (a newer Agones still reads).
//
// # Mapping
//
// Labels and annotations name state fields (package state has each
// field's type and limit). For each field the first of these that is set
// and that the state accepts wins:
//
//	place                                            who sets it
//	annotation agones.dev/sdk-<field>                the game, at run time: SDK.SetAnnotation("<field>", v)
//	label      agones.dev/sdk-<field>                the game, at run time: SDK.SetLabel("<field>", v)
//	annotation queryd.dev/<field>                    the GameServer's manifest (a Fleet's template)
//	label      queryd.dev/<field>                    the GameServer's manifest
//
// so the game's value wins over the manifest's, and an annotation over a
// label (labels hold 63 characters of [A-Za-z0-9._-] and no spaces: use
// annotations for names and text).
//
//	field                            from the text
//	name, map, game, folder,         as it is; invalid UTF-8 becomes U+FFFD, NUL is removed, cut to the
//	version, keywords, gamemode,     field's limit (module.DocText)
//	language, description
//	server_type, environment,        as it is, when the state accepts it ("listen", "windows", digits)
//	steam_id
//	tags                             comma-separated: "pvp, eu" is ["pvp", "eu"]
//	password, vac                    true/false, 1/0 (strconv.ParseBool)
//	max_players, game_port, protocol a decimal integer in the field's range
//	rules                            every rule.<key>: queryd.dev/rule.mp_timelimit = "30" is the rule
//	                                 mp_timelimit; of a key set in several places the first place wins;
//	                                 at most 1,024, keys of at most 128 characters (module.DocRules)
//
// A value the state refuses (max_players = "lots") is left out and the
// next place is tried. Players and the game port come from the status:
//
//	players      the List players_list: each value is one player, named by it (cut to 64 characters), at most
//	             4,096; a player keeps its id (and so its A2S connection time) while it stays in the List.
//	             Without that List, the Counter players_counter: its count is that many players with empty
//	             names (ids 0 to count-1), as Source servers list players still connecting: every client
//	             shows the count, none a made-up name. Without either, no players.
//	max_players  the List's capacity, else the Counter's (0 to 65535); a max_players label or annotation wins.
//	game_port    the number of the status port named port_name (Agones' host port: the one players join);
//	             a game_port label or annotation wins.
//
// Nothing else is read: not the alpha player tracking (status.players,
// off by default and proposed for removal upstream), not the address.
// Whatever the GameServer holds, the document is one the state accepts
// (FuzzWatchLine). The document is a whole layer: a field the GameServer
// no longer sets falls back to what lies under it.
//
// # States
//
//	GameServer state                                          Class            queryd
//	Scheduled, RequestReady (and PortAllocation, Creating,    ClassStarting    not answering yet
//	Starting, which come before the SDK server runs)
//	Ready, Allocated, Reserved                                ClassAnswering   answers the state
//	Shutdown, Unhealthy, Error                                ClassSilent      silent
//	any other ("" or a state a newer Agones adds)             ClassSilent      silent (logged)
//
// Before the first GameServer is read the class is ClassUnread.
//
// # Liveness
//
// [Status] says the class, since when, the state, whether the stream is
// open, the last error, and LastRead: when the SDK server last gave a
// GameServer that could be read (a stream line or a GET answer, new or
// not). While the SDK server answers, LastRead is at most interval old;
// when it is killed or hangs, or sends only what is refused, LastRead
// stops and the last good document stands. [Watcher.Stale] is the
// watcher's rule for the daemon's one silence value (daemon/silence.go,
// where the Agones GameServer is one source beside the feed): queryd
// answers nothing of the GameServer
//
//	before the first GameServer is read, and while it is
//	ClassStarting (Scheduled, RequestReady)           reason agones_starting
//	while it is ClassSilent (Shutdown, Unhealthy,
//	Error, or a state queryd does not know)           reason agones_stopped
//	once nothing was read for Options.StaleAfter
//	([feed] stale_after; 0: never for that)           reason agones
//
// and answers it while it is ClassAnswering and read: "fed", since
// [Watcher.AnsweringSince] (the read that made it ClassAnswering, or the
// first read after a gap longer than stale_after). A class change is
// seen by the sockets at the next receive batch and, through
// Options.Changed, by the XDP program at once; the reads' silence by both
// at the deadline (LastRead plus stale_after), without a notice. It reads
// again without a restart once the SDK server is back. Status, Stale,
// Class and LastRead allocate nothing.
//
// # Metrics
//
//	queryd_agones_reads_total{source,outcome}   source: watch (a stream line), get (GET /gameserver);
//	                                            outcome: applied, same; too_long, not_json, shape, error,
//	                                            timeout, rejected; failed (no answer, HTTP error, stream ended)
//	queryd_agones_reconnects_total              times the stream was opened again
//	queryd_agones_watching                      1 while the stream is open
//	queryd_agones_read_age_seconds              since LastRead (+Inf before the first)
//
// The daemon registers them on the server's registry: each series carries
// server="NAME" (host mode: each server file has its own [agones]).
package agones
