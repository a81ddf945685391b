// Package sagl implements the SAGL query: the JSON a query returns, the UDP
// format ("SAGQ" requests; "SAGR" challenge, info parts and logo pieces),
// the same JSON and the logo over HTTP, and a small client. Replies are
// encoded once per state snapshot; Answer only picks them (or writes a
// challenge or an unaligned logo piece into scratch). The package opens no
// sockets except in Client, and reads no files: the logo comes in as bytes.
//
// This comment is the protocol's reference in queryd: the bytes on the wire,
// the JSON, the logo, the HTTP endpoint, the limits, the sagl.* config keys,
// the metrics and the clients. queryd speaks the query exactly as its
// document specifies it, on the game port (the responder hands it datagrams
// starting "SAGQ"). The operator's overview of every protocol is
// docs/protocols.md.
//
// # Requests
//
// Integers are little-endian. Every request is exactly 64 bytes:
//
//	"SAGQ"  version(u8 = 1)  kind(u8)  reserved(u16 = 0)  token(u32)  logo offset(u32)  zero padding to 64 bytes
//
// kind 1 asks the info (the JSON), kind 2 a logo piece from the offset. The
// reserved u16 and the padding are not checked, so a later minor revision
// may use them. Anything else starting with "SAGQ" (another size or
// version, kind 0 or above 2, a logo offset past the end) is dropped and
// counted as malformed.
//
// # Replies
//
// Every reply starts with an 8-byte header, "SAGR" version(u8 = 1) kind(u8)
// reserved(u16 = 0), and is at most 1,200 bytes:
//
//	challenge  "SAGR" 01 00 00 00  token(u32)                                                12 bytes
//	info part  "SAGR" 01 01 00 00  serial(u32) total length(u32) part(u16) parts(u16) JSON    at most 1,180 bytes of JSON
//	logo piece "SAGR" 01 02 00 00  total size(u32) offset(u32) SHA-256(32 bytes) data         at most 1,024 bytes of logo
//
// Challenge. A request with token 0, or with a token that is not this IP's
// current or previous one, gets only the 12-byte challenge, smaller than the
// 64-byte request. The token is the shared challenge token (package
// challenge: a keyed hash of the client's IP, not its port, and the
// 30-second epoch), so it lives 30 to 60 seconds.
//
// Info (kind 1). One valid request gets every part of the JSON at once,
// numbered from 0 to parts-1, each datagram at most 1,200 bytes. On the
// batch socket layer the parts leave as one UDP GSO send (listen.gso). The
// serial is an FNV-1a hash of the JSON, moved on by one if it would equal
// the previous serial of a different JSON: it changes whenever the JSON
// changes and stays when a state change does not show in the JSON.
//
// Logo (kind 2). The total size, the offset, the logo's SHA-256, then up to
// 1,024 bytes from the requested offset; any offset below the size is
// answered (multiples of 1,024 are pre-encoded, others written per query).
// Without a logo: size 0, a zero hash, no data, and only offset 0 is valid.
//
// Fast path. With [xdp] on, the XDP program answers in the driver
// (FastReplies hands it the bytes): the challenge to a request without a
// valid token, with the source's token written in, and an info request
// with a valid token when the JSON is one part. Logo pieces, JSON of
// several parts and malformed requests go to the socket path. The
// program's answers count under the same metrics (and in
// queryd_xdp_requests_total{protocol="sagl"}).
//
// # The JSON
//
// UTF-8, encoded once per state change, members in this order:
//
//	{"query": 1,
//	 "name": <state name>,
//	 "version": <state version>,
//	 "protocol": <state protocol, 0 when unset>,
//	 "players": {"online": <every player>, "max": <state max_players>,
//	             "list": [{"id": <number>, "name": …, "score": …, "ping": <ms> or null}, …],
//	             "truncated": true},                       (only when the list was cut)
//	 "branding": {"logo": {"sha256": <hex>, "size": <bytes>} or null,
//	              "primary": "#rrggbb" or null, "secondary": "#rrggbb" or null,
//	              "showName": <bool>},
//	 "description", "gamemode", "language", "tags", "links", "values"}
//
// The last six are present only when the state sets them; links and values
// are sorted by key. Players are listed in the order queryd first saw their
// ids; colours are lower case. A ping the state does not know (a negative
// one from the feed, state.PingUnknown) is null: the SAGL document has no
// value for it, and null, like the colours', says "none" without a number
// a client could take for a round trip. sagl.players picks "list" (the
// default), "count" (online and max, no list) or "none" (no "players" member). The
// list stops before it would take more than sagl.max_list bytes (default
// 64 KiB, about 1,000 players with short names) and then carries
// "truncated": true; "online" still counts everyone. Strings escape quotes,
// backslashes and control characters, replace invalid UTF-8 by U+FFFD and
// escape U+2028 and U+2029 for JavaScript.
//
// # The logo
//
// The logo is sagl.logo (or server.branding.logo in the config), any path
// the operator chooses, or the feed's branding.logo, which wins when set. A
// feed-set path is relative to sagl.logo_dir and must stay inside it:
// absolute paths, ".." and symlinks leading out are refused (os.Root; the
// directory is opened at start and on SIGHUP). Without logo_dir (the
// default) the feed cannot set a logo: its branding.logo is refused and
// logged:
//
//	logo not served … feed-set logo paths are refused while [sagl] logo_dir is unset
//
// Until the release that added logo_dir, a feed-set path was relative to
// queryd's working directory and could name any file queryd can read; set
// logo_dir and feed paths relative to it.
//
// Every logo is a regular file (a FIFO, directory or device is refused, and
// the open never blocks), a PNG or JPEG by its first bytes, at most
// sagl.max_logo (default 1 MiB). queryd check rejects a bad sagl.logo or
// logo_dir with its key. A path is read when it changes and on SIGHUP, in
// the background: the state change is served at once, without a logo
// ("logo": null) when the path is new, and the logo follows when read
// (milliseconds); the config's logo is read before the first reply. A
// missing or refused file is logged ("logo not served") and served as no
// logo. The feed cannot reject a bad path: the state document only checks
// that it is a string.
//
// # HTTP
//
// sagl.http = "ADDR:PORT" (off by default; a change needs a restart)
// serves the same JSON over HTTP, for websites:
//
//   - GET (or HEAD) / and /query: the same JSON bytes as UDP,
//     Content-Type application/json.
//   - GET /logo: the logo with its Content-Type, ETag = the quoted hex
//     SHA-256, 304 for a matching If-None-Match, 404 when there is no logo.
//   - Every response has Access-Control-Allow-Origin: * (and
//     X-Content-Type-Options: nosniff); other paths are 404, other methods
//     405 (Allow: GET, HEAD); 503 while the feed is stale.
//   - Timeouts: 5 s for the headers (at most 16 KiB), 10 s to read, 30 s to
//     write, sagl.http_idle_timeout (default 60 s) idle.
//   - At most sagl.http_max_conns connections (default 256) are open at
//     once: past 3/4 of them, each new connection closes the one idle
//     longest (waiting for its first or next request), so under pressure
//     the idle timeout shrinks to however long it takes 1/4 of the cap in
//     new connections to arrive; a connection over the cap (only when the
//     others are all busy) gets a 503 and is closed. Accept waits out a
//     shortage of descriptors or memory and retries. queryd lowers the cap
//     to fit its descriptor budget (README, "Operations").
//
// For HTTPS put it behind nginx or Caddy.
//
// # Budgets
//
// The per-IP byte budget (limits.per_ip_rate, 256 KiB/s, the spec's
// 256 KB/s) covers SAGL. An info reply goes whole or not at all; one larger
// than the burst (64 KiB) takes the whole burst, so one IP gets a very large
// JSON a few times a second.
//
// # Config
//
// The sagl section of queryd.toml (defaults shown; the http keys need a
// restart, the rest apply on SIGHUP):
//
//	[sagl]
//	enabled = true
//	http = ""                  # "127.0.0.1:8080" serves the JSON over HTTP
//	http_max_conns = 256       # 1 to 65536
//	http_idle_timeout = "60s"  # 1s to 1h, while under 3/4 of http_max_conns
//	logo = ""                  # PNG or JPEG file, any path; the feed's branding.logo wins
//	logo_dir = ""              # the directory feed-set logo paths are confined to; "": the feed cannot set one
//	players = "list"           # "list", "count" or "none"
//	max_logo = "1MiB"          # 1KiB to 16MiB
//	max_list = "64KiB"         # 1KiB to 4MiB: JSON bytes of the players list
//
// # Metrics
//
// queryd_requests_total{protocol="sagl",outcome}: answered, challenged,
// malformed, rate_limited, stale; queryd_received_bytes_total and
// queryd_sent_bytes_total{protocol="sagl"}; queryd_gso_sends_total. With
// sagl.http: queryd_sagl_http_connections,
// queryd_sagl_http_closed_total{reason="idle"|"over_cap"} and
// queryd_sagl_http_accept_retries_total. docs/metrics.md has them all.
//
// # Clients
//
// queryd query -proto sagl HOST:PORT [-logo FILE] prints the JSON as the
// server sent it and the round trip on stderr; with -logo it saves the logo
// after checking its SHA-256 (exit 1 if the server has none). In Go: [Dial],
// [Client.Info] (challenge, reassembly, restart on a new serial, retries)
// and [Client.Logo]. In Node.js: clients/node (queryServer(host, port,
// {timeout, logo}), no dependencies).
//
// What the Go client refuses (Client.Timeout, default 1.5 s, bounds each
// Info or Logo call; it asks again every 250 ms): datagrams over 1,200
// bytes; info parts over 1,180 bytes, numbered past their count, or adding
// up past the JSON's total; a JSON over [MaxJSON] (4 MiB, about twice the
// most queryd sends), not an object, nested deeper than [MaxDepth] (64), or
// with more than [MaxItems] (131,072) objects, arrays, members and elements
// (queryd's JSON has at most about 25,000); a logo over [MaxLogo] (16 MiB,
// the most sagl.max_logo allows), pieces that do not fit it or whose size
// or SHA-256 differ from the first piece's, and a logo that does not match
// its SHA-256. Each is a [*BadAnswerError] (when replies were dropped, at
// the timeout). A call takes at most 3 new challenge tokens, then fails with
// [ErrOnlyChallenges] ("answers only with challenges"); a challenge
// repeating the token is asked again only at the next retry. A call that
// ends with parts missing is a timeout saying how far it got. Memory: one
// copy of the parts received (at most the JSON's total) and of the logo.
//
// # Polling a stock server
//
// With [upstream] protocol = "sagl", Module.Poll asks the info JSON from a
// socket of the poll's own: a request without a token (answered with a
// challenge) and then with it. SAGL's info parts do not echo the token: a
// part that comes before the request carrying it is dropped. FromInfo maps
// the JSON field by field to the state's fields of the same names (name,
// version, protocol, description, gamemode, language, tags, links, values,
// branding's colours and showName as show_name), players.max to
// max_players and the players' list (id, name, score, ping) to players (a null, absent or negative ping is unknown),
// keyed by the server's own ids (SAGL's are stable; the poller keeps them
// unless one repeats). The JSON has no rules, so the state gets none. What
// the state refuses (a link that is not http(s), a colour that is not
// #rrggbb, a nested value) is kept as text in the "sagl" object's "other"
// under its path (links.<name>, branding.<colour>, values.<name>,
// protocol, max_players); so are the logo's SHA-256 and size (logo.sha256,
// logo.size: the logo itself is not fetched) and players.online when the
// list names another number (online). No protocol shows "other".
//
// So a front's JSON is the stock server's: the same members, values and
// players with their ids. What may differ: branding.logo (the front's own
// [sagl] logo or null: it does not fetch the server's), what the state
// refuses (above), colours in upper case (the front's are lower case),
// players.online when the list names fewer (the front counts its list),
// the order of players new in one poll (by id), and what the front's own
// [sagl] players and max_list choose. cmd/queryd/upstream_faithful_test.go
// compares the JSON byte for byte.
package sagl
