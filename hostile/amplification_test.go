package hostile

import (
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ampPlayer is one player of an amplification state.
type ampPlayer struct {
	name        string
	score, ping int
}

// ampState is a server state the amplification of every request is
// measured at: the columns of README.md's table.
type ampState struct {
	label                       string // the column's heading in README.md
	name, mapName, folder, game string
	version, keywords, tvName   string // tvName: sourcetv with this name when set
	gamemode                    string // "" leaves it out
	steamID                     bool
	maxPlayers                  int
	players                     []ampPlayer // ids 1, 2, … in this order
	rules                       [][2]string // sorted by key, as queryd keeps them
}

// emoji returns n four-byte characters (U+1F600 onwards from first): the
// most bytes a field of n characters can hold.
func emoji(n, first int) string {
	var b strings.Builder
	for i := range n {
		b.WriteRune(rune(0x1F600 + (first+i)%64))
	}
	return b.String()
}

// ampStates are the three states of README.md's table: the hostile suite's
// own (2 players), a busy server (64 players, 150 rules) and one that fills
// every reply an unproven source can draw to its cap (every string at its
// limit in four-byte characters, 200 players, a g_gametype and 16 rules of
// the longest key and value).
func ampStates() []ampState {
	two := ampState{
		label: "2 players", name: "hostile test", mapName: "arena", folder: "hostile", game: "Hostile",
		version: "1.0.0", maxPlayers: 16,
		players: []ampPlayer{{"Alice", 3, 40}, {"Bob", 5, 60}},
		rules:   [][2]string{{"mp_timelimit", "30"}},
	}
	busy := ampState{
		label: "64 players, 150 rules", name: "a busy server with 64 players..", mapName: "q3dm17xx",
		folder: "hostile", game: "Hostile", version: "1.0.0", maxPlayers: 64,
	}
	for i := 1; i <= 64; i++ {
		busy.players = append(busy.players, ampPlayer{fmt.Sprintf("player-%02d-abcdef", i), i, 20 + i})
	}
	for i := 0; i < 150; i++ {
		busy.rules = append(busy.rules, [2]string{fmt.Sprintf("rule_key_%03d", i), fmt.Sprintf("val%03d", i)})
	}
	full := ampState{
		label: "maximal", name: emoji(256, 0), mapName: emoji(128, 1), folder: emoji(128, 2), game: emoji(128, 3),
		version: emoji(128, 4), keywords: emoji(128, 5), tvName: emoji(128, 6), steamID: true, maxPlayers: 65535,
		gamemode: emoji(128, 10),
	}
	for i := 0; i < 200; i++ {
		full.players = append(full.players, ampPlayer{emoji(64, i), -2147483648, 65535})
	}
	full.rules = append(full.rules, [2]string{"g_gametype", emoji(256, 7)})
	for i := 0; i < 16; i++ {
		full.rules = append(full.rules, [2]string{emoji(128, 8+i), emoji(256, 9)})
	}
	sort.Slice(full.rules, func(i, j int) bool { return full.rules[i][0] < full.rules[j][0] })
	return []ampState{two, busy, full}
}

// doc is the state as a feed document.
func (s ampState) doc() map[string]any {
	players := map[string]any{}
	for i, p := range s.players {
		players[strconv.Itoa(i+1)] = map[string]any{"name": p.name, "score": p.score, "ping": p.ping}
	}
	rules := map[string]any{}
	for _, r := range s.rules {
		rules[r[0]] = r[1]
	}
	d := map[string]any{
		"name": s.name, "map": s.mapName, "folder": s.folder, "game": s.game, "version": s.version,
		"max_players": s.maxPlayers, "players": players, "rules": rules,
	}
	if s.keywords != "" {
		d["keywords"] = s.keywords
	}
	if s.tvName != "" {
		d["sourcetv"] = map[string]any{"port": 27020, "name": s.tvName}
	}
	if s.steamID {
		d["steam_id"] = "90071992547409920"
	}
	if s.gamemode != "" {
		d["gamemode"] = s.gamemode
	}
	return d
}

// The reply sizes as README.md gives them, computed from the state.

// a2sInfoSize is A2S_INFO: 23 bytes, the five strings (each cut to its cap)
// with their NULs counted in the 23, then the optional EDF fields.
func a2sInfoSize(s ampState) int {
	n := 23 + min(len(s.name), 256) + min(len(s.mapName), 128) + min(len(s.folder), 64) +
		min(len(s.game), 128) + min(len(s.version), 64)
	if s.steamID {
		n += 8
	}
	if s.tvName != "" {
		n += 3 + min(len(s.tvName), 128)
	}
	if s.keywords != "" {
		n += 1 + min(len(s.keywords), 256)
	}
	return n
}

// q3GameType is the gametype both Quake 3 replies carry: the g_gametype rule, else "0".
func q3GameType(s ampState) string {
	for _, r := range s.rules {
		if strings.EqualFold(r[0], "g_gametype") {
			return r[1]
		}
	}
	return "0"
}

func digits(n int) int { return len(strconv.Itoa(n)) }

// mbePongSize is the Bedrock pong: 84 bytes with the default [bedrock]
// config and five-digit ports, the motd (name), sub-motd (map), version
// and game mode (the state's, else "Survival") cut to 256, 128, 64 and 64
// bytes, and the digits of the player count and of max_players.
func mbePongSize(s ampState) int {
	mode := s.gamemode
	if mode == "" {
		mode = "Survival"
	}
	return 84 + min(len(s.name), 256) + min(len(s.mapName), 128) + min(len(s.version), 64) + min(len(mode), 64) +
		digits(len(s.players)) + digits(s.maxPlayers)
}

// q3InfoSize is infoResponse: 17 bytes of header, then \key\value pairs,
// 2 + key + value bytes each, all within 16,245 bytes (so that a challenge
// of up to 128 characters still fits 16 KiB).
func q3InfoSize(s ampState, extras [][2]string) int {
	n := 17
	for _, kv := range extras {
		n += 2 + len(kv[0]) + len(kv[1])
	}
	clients := max(s.maxPlayers, len(s.players), 1)
	n += 121 - 17 + len(q3GameType(s)) + digits(clients) + digits(len(s.players)) + digits(len(s.players)) +
		len(s.mapName) + len(s.name) + len(s.folder)
	return n
}

// q3StatusSize is statusResponse: 19 bytes of header, an info string of at
// most 8,192 bytes (fixed keys, extras, then the rules that fit), a newline,
// then one line of score + ping + name + 5 bytes per player while the whole
// fits 16,245 bytes.
func q3StatusSize(s ampState, extras [][2]string) int {
	clients := max(s.maxPlayers, len(s.players), 1)
	info := 84 + len(s.name) + len(s.mapName) + digits(clients) + len(s.folder) + len(q3GameType(s))
	if s.version != "" {
		info += 9 + len(s.version)
	}
	seen := map[string]bool{"sv_hostname": true, "mapname": true, "sv_maxclients": true, "protocol": true,
		"gamename": true, "g_gametype": true, "g_needpass": true, "version": true}
	add := func(k, v string) {
		if !seen[strings.ToLower(k)] && info+2+len(k)+len(v) <= 8192 {
			seen[strings.ToLower(k)] = true
			info += 2 + len(k) + len(v)
		}
	}
	for _, kv := range extras {
		add(kv[0], kv[1])
	}
	for _, r := range s.rules {
		add(r[0], r[1])
	}
	n := 19 + info + 1
	for _, p := range s.players {
		line := digits(p.score) + digits(max(p.ping, 1)) + len(p.name) + 5
		if n+line > 16245 {
			break
		}
		n += line
	}
	return n
}

// ampRequest is one request type measured: the cells of its README.md row.
type ampRequest struct {
	proto, label string // the row's first two cells
	req          []byte
	want         func(s ampState) int // the reply size; nil: the GameSpy4 token (12 to 16 bytes)
}

func constant(n int) func(ampState) int { return func(ampState) int { return n } }

// ampConfigs are the daemons the requests are measured on: the default
// config, A2S with info_challenge off and legacy requests on, and Quake 3
// with 32 [quake3.info] keys of the longest key and value.
func ampConfigs() []struct {
	over Tables
	reqs []ampRequest
} {
	engine := []byte("Source Engine Query\x00")
	var extras [][2]string
	info := map[string]string{}
	for i := 0; i < 32; i++ {
		k := fmt.Sprintf("x%02d", i) + strings.Repeat("k", 61)
		v := strings.Repeat("v", 256)
		extras = append(extras, [2]string{k, v})
		info[k] = v
	}
	q3 := func(label string, req string, size func(ampState) int) ampRequest {
		return ampRequest{"Quake 3", label, []byte("\xFF\xFF\xFF\xFF" + req), size}
	}
	q3x := func(label string, req string, size func(ampState) int) ampRequest {
		r := q3(label, req, size)
		r.proto = "Quake 3, 32 `[quake3.info]` keys"
		return r
	}
	openA2S := "A2S, `info_challenge = false`, `legacy_requests = true`"
	reqs := unprovenRequests()
	byName := func(proto, name string) []byte {
		for _, r := range reqs {
			if r.Protocol == proto && r.Name == name {
				return r.Bytes
			}
		}
		panic("no request " + proto + " " + name)
	}
	generous := Tables{"limits": generousLimits, "quake3": {"packet_rate": 0}, "bedrock": {"ipv4_port": 19132, "ipv6_port": 19133}}
	return []struct {
		over Tables
		reqs []ampRequest
	}{
		{generous, []ampRequest{
			{"A2S", "INFO (25)", a2sReq('T', engine), constant(9)},
			{"A2S", "INFO with -1 or a made-up token (29)", byName("a2s", "INFO -1"), constant(9)},
			{"A2S", "INFO with -1 or a made-up token (29)", byName("a2s", "INFO bogus token"), constant(9)},
			{"A2S", "INFO `SOURCE\\0` compat (12)", byName("a2s", "INFO compat SOURCE"), constant(9)},
			{"A2S", "PLAYER, RULES, compat `A` with -1 or a made-up token (9)", byName("a2s", "PLAYER -1"), constant(9)},
			{"A2S", "PLAYER, RULES, compat `A` with -1 or a made-up token (9)", byName("a2s", "RULES bogus token"), constant(9)},
			{"A2S", "PLAYER, RULES, compat `A` with -1 or a made-up token (9)", byName("a2s", "compat retry A bogus token"), constant(9)},
			{"A2S", "GETCHALLENGE, A2A_PING (5)", byName("a2s", "GETCHALLENGE"), constant(0)},
			{"A2S", "GETCHALLENGE, A2A_PING (5)", byName("a2s", "PING"), constant(0)},
			{"A2S", "GETCHALLENGE padded (9)", byName("a2s", "GETCHALLENGE padded"), constant(9)},
			{"A2S", "A2A_PING padded (6)", byName("a2s", "PING padded"), constant(6)},
			{"GameSpy4", "handshake (7)", byName("gamespy4", "handshake"), nil},
			{"GameSpy4", "handshake as gamedig sends it (11)", byName("gamespy4", "handshake gamedig 11 B"), nil},
			{"GameSpy4", "basic stat with a made-up token (11)", byName("gamespy4", "basic stat bogus token"), constant(0)},
			{"GameSpy4", "full stat with a made-up token (15)", byName("gamespy4", "full stat bogus token"), constant(0)},
			{"SAGL", "info or logo, token 0 or made-up (64)", byName("sagl", "info token 0"), constant(12)},
			{"SAGL", "info or logo, token 0 or made-up (64)", byName("sagl", "logo bogus token"), constant(12)},
			{"SQP", "challenge (5)", byName("sqp", "challenge"), constant(5)},
			{"SQP", "query with token 0, a made-up token or unknown chunks (8)", byName("sqp", "query bogus token"), constant(0)},
			{"SQP", "query with token 0, a made-up token or unknown chunks (8)", byName("sqp", "query token 0"), constant(0)},
			{"SQP", "query with token 0, a made-up token or unknown chunks (8)", byName("sqp", "query unknown chunks"), constant(0)},
			q3("getinfo (11)", "getinfo", func(s ampState) int { return q3InfoSize(s, nil) }),
			q3("getinfo with a 40-character challenge (52)", "getinfo "+strings.Repeat("x", 40),
				func(s ampState) int { return q3InfoSize(s, nil) + 11 + 40 }),
			q3("getstatus (13)", "getstatus", func(s ampState) int { return q3StatusSize(s, nil) }),
			q3("getstatus with a 5-character challenge (20)", "getstatus 12345\n",
				func(s ampState) int { return q3StatusSize(s, nil) + 11 + 5 }),
			{"Bedrock", "ping, id 01 or 02 (33)", byName("bedrock", "ping"), mbePongSize},
			{"Bedrock", "ping, id 01 or 02 (33)", byName("bedrock", "ping open connections"), mbePongSize},
		}},
		{Tables{"limits": generousLimits, "a2s": {"info_challenge": false, "legacy_requests": true}}, []ampRequest{
			{openA2S, "INFO (25)", a2sReq('T', engine), a2sInfoSize},
			{openA2S, "INFO `SOURCE\\0` compat (12)", byName("a2s", "INFO compat SOURCE"), a2sInfoSize},
			{openA2S, "GETCHALLENGE (5)", byName("a2s", "GETCHALLENGE"), constant(9)},
			{openA2S, "A2A_PING (5)", byName("a2s", "PING"), constant(6)},
		}},
		{Tables{"limits": generousLimits, "quake3": {"packet_rate": 0, "info": info}}, []ampRequest{
			q3x("getinfo (11)", "getinfo", func(s ampState) int { return q3InfoSize(s, extras) }),
			q3x("getstatus (13)", "getstatus", func(s ampState) int { return q3StatusSize(s, extras) }),
		}},
	}
}

// ampCell formats a measured reply as README.md's table gives it:
// "4,794 B (369×)", or "nothing".
func ampCell(reply, req int) string {
	if reply == 0 {
		return "nothing"
	}
	return thousands(reply) + " B (" + factor(reply, req) + "×)"
}

// factor is reply ÷ request: to the unit from 100, one decimal from 10, else two.
func factor(reply, req int) string {
	f := float64(reply) / float64(req)
	switch {
	case f >= 100:
		return thousands(int(f + 0.5))
	case f >= 10:
		return fmt.Sprintf("%.1f", f)
	}
	return fmt.Sprintf("%.2f", f)
}

// thousands formats n with commas: 16,240.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestAmplification measures the reply to every request type of every
// protocol from a source that never proved its address, at three states (2
// players; 64 players and 150 rules; everything at its limit) and three
// configs, with budgets far above the traffic. Each reply must have the
// size README.md's formula gives, and README.md's table ("Amplification
// by state") must show it: one row per protocol and request, one column per
// state, "bytes B (factor×)".
func TestAmplification(t *testing.T) {
	measured, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	states := ampStates()
	type rowKey struct{ proto, label string }
	cells := map[rowKey][]string{}
	var order []rowKey
	var table strings.Builder
	block := 40
	for _, cfg := range ampConfigs() {
		d := StartDaemon(t, cfg.over)
		fc := d.Feed(t)
		for si, st := range states {
			if _, err := fc.Replace(st.doc()); err != nil {
				t.Fatalf("%s: feeding the state: %v", st.label, err)
			}
			srcs := make([]*Source, len(cfg.reqs))
			for i, r := range cfg.reqs {
				srcs[i] = NewSource(t, sourceIP(block, si*64+i), d.UDPAddr)
				if err := srcs[i].Send(r.req); err != nil {
					t.Fatal(err)
				}
			}
			waitQuiet(srcs, 300*time.Millisecond, 5*time.Second)
			for i, r := range cfg.reqs {
				got := int(srcs[i].recv.Load())
				k := rowKey{r.proto, r.label}
				if _, ok := cells[k]; !ok {
					cells[k] = make([]string, len(states))
					order = append(order, k)
				}
				cell := ampCell(got, len(r.req))
				if r.want == nil { // the GameSpy4 token: 6 to 10 digits
					if got < 12 || got > 16 {
						t.Errorf("%s %s at %s: %d bytes; want 12 to 16", r.proto, r.label, st.label, got)
					}
					cell = "12–16 B (≤ " + factor(16, len(r.req)) + "×)"
				} else if want := r.want(st); got != want {
					t.Errorf("%s %s at %s: %d bytes; the formula gives %d", r.proto, r.label, st.label, got, want)
				}
				if prev := cells[k][si]; prev != "" && prev != cell {
					t.Errorf("%s %s at %s: %s here, %s for another request of the row", r.proto, r.label, st.label, cell, prev)
				}
				cells[k][si] = cell
			}
		}
		block++
	}
	fmt.Fprintf(&table, "| protocol | request (bytes) | %s |\n", strings.Join(labels(states), " | "))
	for _, k := range order {
		fmt.Fprintf(&table, "| %s | %s | %s |\n", k.proto, k.label, strings.Join(cells[k], " | "))
	}
	t.Logf("amplification by state:\n%s", table.String())

	// README.md's section "Amplification by state": a row starting with
	// the same two cells, the states' cells (after the formula's) as measured.
	section, ok := strings.CutPrefix(string(measured)[strings.Index(string(measured), "\n### Amplification by state\n")+1:], "### Amplification by state\n")
	if !ok {
		t.Fatal("README.md has no section \"### Amplification by state\"")
	}
	if end := strings.Index(section, "\n### "); end >= 0 {
		section = section[:end]
	}
	lines := strings.Split(section, "\n")
	for _, k := range order {
		prefix := "| " + k.proto + " | " + k.label + " |"
		var row string
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				row = l
				break
			}
		}
		if row == "" {
			t.Errorf("README.md has no amplification row %q", prefix)
			continue
		}
		parts := strings.Split(strings.Trim(row, "| "), " | ")
		if len(parts) < 2+len(states) {
			t.Errorf("README.md row %q: want a formula and %d states", row, len(states))
			continue
		}
		got := parts[len(parts)-len(states):]
		for i, want := range cells[k] {
			if strings.TrimSpace(got[i]) != want {
				t.Errorf("README.md %s %s at %s: %q; measured %q", k.proto, k.label, states[i].label, strings.TrimSpace(got[i]), want)
			}
		}
	}
}

func labels(states []ampState) []string {
	var out []string
	for _, s := range states {
		out = append(out, s.label)
	}
	return out
}

// TestUnprovenBudgetSplit shows how the unproven budget is split: evenly
// among the receive loops, workers × addresses, and a datagram only reaches
// the loops of the address it was sent to. With 2 workers on 127.0.0.1 and
// on [::1] (4 loops), spoofed IPv4 sources draw at most half the budget;
// with 127.0.0.1 alone (2 loops), all of it. The flood: Quake 3 getstatus
// from 32 sources (32 flows over the address's 2 sockets), 4,000 a second
// for 1 s, against 16,384 B/s with a burst of 6,000 (1,500 a loop on 4,
// 3,000 on 2).
func TestUnprovenBudgetSplit(t *testing.T) {
	skipShort(t, "two floods at the unproven budget")
	probe, err := net.ListenPacket("udp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	port6 := probe.LocalAddr().(*net.UDPAddr).Port
	probe.Close()
	const rate, burst = 16384, 6000
	limits := map[string]any{"per_ip_rate": "64MiB", "per_ip_burst": "16MiB", "unproven_rate": rate, "unproven_burst": burst}
	req := []byte("\xFF\xFF\xFF\xFFgetstatus")
	for i, dual := range []bool{true, false} {
		d := newDaemon(t, nil)
		udp := []string{d.UDPAddr}
		if dual {
			udp = append(udp, fmt.Sprintf("[::1]:%d", port6))
		}
		loops := testWorkers * len(udp)
		d.WriteConfig(t, baseTables(), Tables{"listen": {"udp": udp, "workers": testWorkers}, "limits": limits, "quake3": {"packet_rate": 0}})
		d.Start(t)
		var srcs []*Source
		for j := 0; j < 32; j++ {
			srcs = append(srcs, NewSource(t, sourceIP(44+i, j), d.UDPAddr))
		}
		reply := maxReply(d, t, req)
		time.Sleep(500 * time.Millisecond) // the budgets fill back up after maxReply
		start := time.Now()
		flood(t, srcs, req, 4000, time.Second)
		waitQuiet(srcs, 300*time.Millisecond, 3*time.Second)
		var total, last int64
		for _, s := range srcs {
			total += s.recv.Load()
			last = max(last, s.lastRecv.Load())
		}
		window := time.Unix(0, last).Sub(start).Seconds()
		// IPv4 reaches testWorkers of the loops, each with rate ÷ loops
		// and a burst of burst ÷ loops (at least 1,500).
		share := float64(testWorkers) / float64(loops)
		allowed := share*float64(loops*max(burst/loops, 1500)) + share*rate*window + float64(reply)
		t.Logf("listening on %v (%d loops): IPv4 drew %d B in %.2f s (%.0f B/s); allowed %.0f B: %.0f%% of the budget's rate",
			udp, loops, total, window, float64(total)/window, allowed, 100*share)
		if float64(total) > allowed || float64(total) < 0.6*allowed {
			t.Errorf("listening on %v: IPv4 drew %d B in %.2f s; want 60-100%% of %.0f B (%.0f%% of the budget)", udp, total, window, allowed, 100*share)
		}
	}
}
