package quake3

import (
	"bufio"
	"context"
	"encoding/hex"
	"math"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/polltest"
	"github.com/queryd/queryd/internal/udptest"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/state"
)

// ioquake3Status returns the statusResponse a real ioquake3 server
// (OpenArena 0.8.8, 2 bots) sent to "getstatus xyz123", from the quake3
// package's captures.
func ioquake3Status(t testing.TB) []byte {
	t.Helper()
	f, err := os.Open("testdata/ioquake3-replies.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	want := false
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		switch {
		case k == "REQUEST_HEX":
			want = v == hex.EncodeToString([]byte("\xFF\xFF\xFF\xFFgetstatus xyz123"))
		case k == "REPLY_HEX" && want:
			b, err := hex.DecodeString(v)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatal("no getstatus capture")
	return nil
}

// The real ioquake3 server's statusResponse: its hostname, map, slots,
// version, mod folder and game become the state's fields; every other cvar
// is a rule (the poll's challenge is not); the bot (ping 0) is a bot.
func TestFromStatusCaptured(t *testing.T) {
	st, err := ParseStatusResponse(ioquake3Status(t))
	if err != nil {
		t.Fatal(err)
	}
	doc := FromStatus(st)
	snap := polltest.Valid(t, doc)
	if snap.Name != "^1queryd ^7reference" || snap.Map != "oa_dm1" || snap.MaxPlayers != 12 ||
		snap.GameVersion != "ioq3 1.36+u20221123.70d07d9+dfsg-1/Debian linux-x86_64 Jan  8 2023" ||
		snap.Folder != "baseoa" || snap.Game != "Quake3Arena" || snap.Password {
		t.Errorf("fields: %+v", snap)
	}
	if len(snap.Players) != 1 || snap.Players[0].Name != "Kyonshi" || !snap.Players[0].Bot || snap.Players[0].Score != 0 {
		t.Errorf("players %+v", snap.Players)
	}
	rules := map[string]string{}
	for _, r := range snap.Rules {
		rules[r.Key] = r.Value
	}
	for k, v := range map[string]string{
		"com_protocol": "71", "bot_minplayers": "2", "g_gametype": "0", "com_gamename": "Quake3Arena",
		"g_voteGametypes": "/0/1/3/4/5/6/7/8/9/10/11/12/", "g_timestamp": "2026-11-29 17:02:48", "sv_floodProtect": "1",
	} {
		if rules[k] != v {
			t.Errorf("rule %s = %q, want %q", k, rules[k], v)
		}
	}
	for _, k := range []string{"challenge", "sv_hostname", "mapname", "sv_maxclients", "version", "gamename", "g_needpass"} {
		if _, ok := rules[k]; ok {
			t.Errorf("rule %s: a field of the state, not a rule", k)
		}
	}
	// Every cvar of the reply but those 7 is a rule.
	if want := len(st.Info.Keys) - 7; len(rules) != want {
		t.Errorf("%d rules, want %d", len(rules), want)
	}
}

// Malformed or oversized statusResponse values are fitted to the state:
// the document is always valid, and nothing that fits is lost.
func TestFromStatusLimits(t *testing.T) {
	long := strings.Repeat("é", 300)
	var lines strings.Builder
	for i := range 5000 {
		lines.WriteString(strconv.Itoa(i) + ` 5 "p` + strconv.Itoa(i) + `"` + "\n")
	}
	var many strings.Builder
	for i := range 1100 {
		many.WriteString(`\cvar` + strconv.Itoa(i) + `\` + strconv.Itoa(i))
	}
	for name, c := range map[string]struct {
		reply string
		check func(t *testing.T, snap *state.Snapshot)
	}{
		"long values cut": {`\sv_hostname\` + long + `\mapname\` + long + `\k\` + long + "\n" + `1 2 "` + long + `"` + "\n",
			func(t *testing.T, s *state.Snapshot) {
				if s.Name != long[:2*state.MaxNameLen] || s.Map != long[:2*state.MaxShortLen] || s.Players[0].Name != long[:2*state.MaxPlayerName] ||
					s.Rules[0].Value != long[:2*state.MaxRuleValueLen] {
					t.Errorf("%+v", s)
				}
			}},
		"a key too long is left out": {`\` + strings.Repeat("k", 129) + `\v\ok\1` + "\n", func(t *testing.T, s *state.Snapshot) {
			if len(s.Rules) != 1 || s.Rules[0].Key != "ok" {
				t.Errorf("%+v", s.Rules)
			}
		}},
		"sv_maxclients not a count stays a rule": {`\sv_maxclients\lots` + "\n", func(t *testing.T, s *state.Snapshot) {
			if s.MaxPlayers != 0 || len(s.Rules) != 1 || s.Rules[0] != (state.Rule{Key: "sv_maxclients", Value: "lots"}) {
				t.Errorf("%+v", s)
			}
		}},
		"sv_maxclients over 65535": {`\sv_maxclients\70000` + "\n", func(t *testing.T, s *state.Snapshot) {
			if s.MaxPlayers != 0 || len(s.Rules) != 1 {
				t.Errorf("%+v", s)
			}
		}},
		"hostname when no sv_hostname": {`\hostname\h` + "\n", func(t *testing.T, s *state.Snapshot) {
			if s.Name != "h" || len(s.Rules) != 0 {
				t.Errorf("%+v", s)
			}
		}},
		"needpass": {`\g_needpass\1` + "\n", func(t *testing.T, s *state.Snapshot) {
			if !s.Password {
				t.Error("g_needpass 1 is a password")
			}
		}},
		"invalid UTF-8 and NUL": {"\\sv_hostname\\a\xffb\x00c\n1 2 \"n\xc3\x00\"\n", func(t *testing.T, s *state.Snapshot) {
			if s.Name != "a\uFFFDbc" || s.Players[0].Name != "n\uFFFD" {
				t.Errorf("%q %q", s.Name, s.Players[0].Name)
			}
		}},
		"scores, pings out of range": {"\n99999999999 -5 \"a\"\n-99999999999 99999 \"b\"\n", func(t *testing.T, s *state.Snapshot) {
			a, b := s.Players[0], s.Players[1]
			if a.Score != math.MaxInt32 || a.Ping != state.PingUnknown || a.Bot || b.Score != math.MinInt32 || b.Ping != 65535 || b.Bot {
				t.Errorf("%+v", s.Players)
			}
		}},
		"ping 999 (ioquake3: not active yet) is unknown, 0 a bot": {"\n3 999 \"connecting\"\n0 0 \"bot\"\n5 998 \"slow\"\n", func(t *testing.T, s *state.Snapshot) {
			c, b, slow := s.Players[0], s.Players[1], s.Players[2]
			if c.Ping != state.PingUnknown || c.Bot || b.Ping != 0 || !b.Bot || slow.Ping != 998 || slow.Bot {
				t.Errorf("%+v", s.Players)
			}
		}},
		"5000 players: the first 4096": {"\n" + lines.String(), func(t *testing.T, s *state.Snapshot) {
			if len(s.Players) != state.MaxPlayers {
				t.Errorf("%d players", len(s.Players))
			}
		}},
		"1100 cvars: the first 1024": {many.String() + "\n", func(t *testing.T, s *state.Snapshot) {
			if len(s.Rules) != state.MaxRules {
				t.Errorf("%d rules", len(s.Rules))
			}
		}},
		"empty key left out": {`\\v\a\1` + "\n", func(t *testing.T, s *state.Snapshot) {
			if len(s.Rules) != 1 || s.Rules[0].Key != "a" {
				t.Errorf("%+v", s.Rules)
			}
		}},
	} {
		t.Run(name, func(t *testing.T) {
			st, err := ParseStatusResponse([]byte("\xFF\xFF\xFF\xFFstatusResponse\n" + c.reply))
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, polltest.Valid(t, FromStatus(st)))
		})
	}
}

// A poll reads only the statusResponse that echoes its challenge: a forged
// one (another challenge) and junk that comes first are dropped.
func TestPollChallengeChecked(t *testing.T) {
	addr := udptest.Answer(t, func(req []byte) [][]byte {
		const cmd = "\xFF\xFF\xFF\xFFgetstatus "
		if !strings.HasPrefix(string(req), cmd) {
			return nil
		}
		ch := string(req[len(cmd):])
		return [][]byte{
			[]byte("\xFF\xFF\xFF\xFFstatusResponse\n\\challenge\\guessed\\sv_hostname\\FORGED\n"),
			[]byte("\xFF\xFF\xFF\xFFstatusResponse\nno backslash\n"),
			[]byte("\xFF\xFF\xFF\xFFstatusResponse\n\\challenge\\" + ch + "\\sv_hostname\\real\n"),
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := Module{}.Poll(ctx, netip.MustParseAddrPort(addr), module.PollOptions{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got.Doc["name"] != "real" {
		t.Fatalf("name %v: a reply without the poll's challenge was read", got.Doc["name"])
	}
}
