package sqp

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/queryd/queryd/state"
)

// The ServerInfo reply is byte for byte go-svrquery's captured one.
func TestAnswerrInfoMatchesUpstream(t *testing.T) {
	enc := encode(upstreamConfig, upstreamSnapshot())
	out := enc.plans[ChunkServerInfo].write(256, make([]byte, MaxReply), nil)
	if want := vector(t, "info_single_response"); len(out) != 1 || string(out[0]) != string(want) {
		t.Fatalf("ServerInfo reply\n% x\nwant\n% x", out, want)
	}
}

// The client reads go-svrquery's captured replies as go-svrquery's tests
// expect them read.
func TestParseUpstreamReplies(t *testing.T) {
	payload := func(name string) []byte {
		h, p, err := ParseHeader(vector(t, name))
		if err != nil || h.Token != 256 || h.Version != 1 || h.Current != 0 || h.Last != 0 {
			t.Fatalf("%s: header %+v, %v", name, h, err)
		}
		return p
	}
	wantInfo := ServerInfo{CurrentPlayers: 5, MaxPlayers: 10, ServerName: "my server", GameType: "ctf", BuildID: "1", Map: "map", Port: 1025}
	r, err := ParseResponse(payload("info_single_response"), ChunkServerInfo)
	if err != nil || *r.Info != wantInfo {
		t.Fatalf("info_single: %+v, %v", r, err)
	}
	multi, err := Reassemble([][]byte{vector(t, "info_multi_response_000"), vector(t, "info_multi_response_001")}, 256)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := ParseResponse(multi, ChunkServerInfo); err != nil || *r.Info != wantInfo {
		t.Fatalf("info_multi: %+v, %v", r, err)
	}
	var bad *BadAnswerError
	if _, err := ParseResponse(payload("info_single_malformed_response"), ChunkServerInfo); !errors.As(err, &bad) {
		t.Fatalf("info_single_malformed: err %v, want a BadAnswerError", err)
	}

	r, err = ParseResponse(payload("rules_response"), ChunkServerRules)
	if err != nil {
		t.Fatal(err)
	}
	wantRules := []Rule{
		{"rule 1", Value{Type: Uint8, Uint: 0x80}},
		{"rule 2", Value{Type: Uint16, Uint: 0x0101}},
		{"rule 3", Value{Type: Uint32, Uint: 0x01000001}},
		{"rule 4", Value{Type: Uint64, Uint: 0x0100000000000001}},
		{"rule 5", Value{Type: String, Str: "string"}},
	}
	if len(r.Rules) != len(wantRules) {
		t.Fatalf("rules %+v", r.Rules)
	}
	for i, w := range wantRules {
		if r.Rules[i] != w {
			t.Errorf("rule %d: %+v, want %+v", i, r.Rules[i], w)
		}
	}

	for _, name := range []string{"player_response", "team_response"} {
		r, err := ParseResponse(payload(name), ChunkPlayerInfo)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p := r.Players
		if len(p.Fields) != 5 || len(p.Rows) != 2 || p.Fields[4] != (Field{"field5", String}) {
			t.Fatalf("%s: %+v", name, p)
		}
		for i, want := range []string{"string", "STRING"} {
			if v, _ := p.Get(i, "field5"); v.Str != want {
				t.Errorf("%s row %d field5 %+v", name, i, v)
			}
			if v, _ := p.Get(i, "field4"); v.Uint != 1<<56|uint64(i+1) {
				t.Errorf("%s row %d field4 %#x", name, i, v.Uint)
			}
		}
	}
}

func TestRuleType(t *testing.T) {
	for v, want := range map[string]struct {
		t DataType
		n uint64
	}{
		"true": {Uint8, 1}, "false": {Uint8, 0},
		"0": {Uint16, 0}, "30": {Uint16, 30}, "65535": {Uint16, 65535},
		"65536": {Uint32, 65536}, "4294967295": {Uint32, 4294967295},
		"4294967296": {Uint64, 4294967296}, "18446744073709551615": {Uint64, 18446744073709551615},
		"18446744073709551616": {String, 0}, "-5": {String, 0}, "+5": {String, 0}, "007": {String, 0},
		"00": {String, 0}, "1.5": {String, 0}, "1e3": {String, 0}, "": {String, 0}, " 1": {String, 0},
		"1 ": {String, 0}, "True": {String, 0}, "١": {String, 0}, "12a": {String, 0},
	} {
		if typ, n := RuleType(v); typ != want.t || n != want.n {
			t.Errorf("RuleType(%q) = %d, %d; want %d, %d", v, typ, n, want.t, want.n)
		}
	}
}

// The rules' records, byte for byte.
func TestRuleBytes(t *testing.T) {
	r := encodeRules([]state.Rule{
		{Key: "b", Value: "true"}, {Key: "n", Value: "300"}, {Key: "u", Value: "70000"},
		{Key: "w", Value: "5000000000"}, {Key: "s", Value: "-1"},
		{Key: strings.Repeat("k", 256), Value: "left out"},
	})
	want := unhex(t, `
		01 62 00 01
		01 6E 01 01 2C
		01 75 02 00 01 11 70
		01 77 03 00 00 00 01 2A 05 F2 00
		01 73 04 02 2D 31`)
	if string(r.b) != string(want) || len(r.ends) != 5 {
		t.Fatalf("rules\n% x\nwant\n% x (%d ends)", r.b, want, len(r.ends))
	}
}

// The players' records, byte for byte: a negative score as its uint32
// two's complement bits.
func TestPlayerBytes(t *testing.T) {
	r := encodePlayers([]state.Player{{Name: "Al", Score: -1, Ping: 40}, {Name: "", Score: 70000, Ping: 70000}, {Name: "B", Ping: state.PingUnknown}})
	want := unhex(t, `
		02 41 6C FF FF FF FF 00 28
		00 00 01 11 70 FF FF
		01 42 00 00 00 00 00 00`)
	if string(r.b) != string(want) {
		t.Fatalf("players\n% x\nwant\n% x", r.b, want)
	}
	if string(playerFields) != string(unhex(t, "03 04 6E 61 6D 65 04 05 73 63 6F 72 65 02 04 70 69 6E 67 01")) {
		t.Fatalf("field header % x", playerFields)
	}
}

// Strings are cut to 255 bytes at a character boundary.
func TestCut(t *testing.T) {
	for _, s := range []string{
		strings.Repeat("a", 300),
		strings.Repeat("é", 200), // 2-byte characters: 254 bytes
		strings.Repeat("日", 100), // 3-byte characters: 255 bytes
		strings.Repeat("🎮", 100), // 4-byte characters: 252 bytes
		"a" + strings.Repeat("🎮", 100),
	} {
		c := cut(s)
		if len(c) > MaxString || len(c) < MaxString-3 || !utf8.ValidString(c) || !strings.HasPrefix(s, c) {
			t.Errorf("cut(%.10q…) = %d bytes, valid %v", s, len(c), utf8.ValidString(c))
		}
	}
	if cut("short") != "short" {
		t.Error("short string changed")
	}
}

// Every one of the 32 chunk combinations decodes to exactly the state.
func TestEveryCombination(t *testing.T) {
	snap := richSnapshot()
	h, _ := newTestHandler(t, upstreamConfig, snap)
	for c := 0; c <= AllChunks; c++ {
		chunks := byte(c)
		resp, _ := query(t, h, chunks)
		if (resp.Info != nil) != (chunks&ChunkServerInfo != 0) || (resp.Rules != nil) != (chunks&ChunkServerRules != 0) ||
			(resp.Players != nil) != (chunks&ChunkPlayerInfo != 0) || (resp.Teams != nil) != (chunks&ChunkTeamInfo != 0) {
			t.Fatalf("chunks %#02x: %+v", chunks, resp)
		}
		if resp.Info != nil {
			want := ServerInfo{CurrentPlayers: 4, MaxPlayers: 64, ServerName: snap.Name, GameType: "Deathmatch", BuildID: "2.0.1", Map: "de_dust2", Port: 7777}
			if *resp.Info != want {
				t.Errorf("chunks %#02x: info %+v", chunks, *resp.Info)
			}
		}
		if resp.Rules != nil {
			checkRules(t, resp.Rules, snap.Rules)
		}
		if resp.Players != nil {
			checkPlayers(t, resp.Players, snap.Players)
		}
		if resp.Teams != nil && (len(resp.Teams.Rows) != 0 || len(resp.Teams.Fields) != 0) {
			t.Errorf("chunks %#02x: teams %+v", chunks, resp.Teams)
		}
		if chunks&ChunkMetrics != 0 && len(resp.Metrics) != 0 {
			t.Errorf("chunks %#02x: metrics % x", chunks, resp.Metrics)
		}
	}
}

// checkRules compares decoded rules with the state's, by the type rule.
func checkRules(t *testing.T, got []Rule, want []state.Rule) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d rules, want %d", len(got), len(want))
	}
	for i, w := range want {
		typ, n := RuleType(w.Value)
		g := got[i]
		if g.Key != w.Key || g.Value.Type != typ || typ == String && g.Value.Str != w.Value || typ != String && g.Value.Uint != n {
			t.Errorf("rule %d: %+v, want %q = %q", i, g, w.Key, w.Value)
		}
	}
}

// checkPlayers compares a decoded player list with the first players of
// the state.
func checkPlayers(t *testing.T, got *Table, want []state.Player) {
	t.Helper()
	if len(got.Fields) != 3 || got.Fields[0] != (Field{"name", String}) || got.Fields[1] != (Field{"score", Uint32}) || got.Fields[2] != (Field{"ping", Uint16}) {
		t.Fatalf("fields %+v", got.Fields)
	}
	if len(got.Rows) > len(want) {
		t.Fatalf("%d players, the state has %d", len(got.Rows), len(want))
	}
	for i := range got.Rows {
		name, _ := got.Get(i, "name")
		score, _ := got.Get(i, "score")
		ping, _ := got.Get(i, "ping")
		w := want[i]
		if name.Str != w.Name || int32(uint32(score.Uint)) != w.Score || ping.Uint != uint64(w.Ping) {
			t.Errorf("player %d: %q %d %d, want %+v", i, name.Str, int32(uint32(score.Uint)), ping.Uint, w)
		}
	}
}

// A reply larger than one datagram is split into full 1,472-byte packets
// and a last shorter one, numbered 0 to last, each with the client's token.
func TestPacketLayout(t *testing.T) {
	h, _ := newTestHandler(t, Config{}, manyPlayers(255, 100))
	tok := h.issuer.Token(clientA.Addr())
	resp, out := query(t, h, ChunkServerInfo|ChunkServerRules|ChunkPlayerInfo)
	if len(out) < 5 || len(out) > MaxPackets {
		t.Fatalf("%d packets", len(out))
	}
	for i, d := range out {
		if i < len(out)-1 && len(d) != MaxPacket || len(d) > MaxPacket {
			t.Errorf("packet %d: %d bytes", i, len(d))
		}
		want := []byte{TypeQuery, 0, 0, 0, 0, 0, 1, byte(i), byte(len(out) - 1), 0, 0}
		binary.BigEndian.PutUint32(want[1:], tok)
		binary.BigEndian.PutUint16(want[9:], uint16(len(d)-HeaderLen))
		if string(d[:HeaderLen]) != string(want) {
			t.Errorf("packet %d header % x, want % x", i, d[:HeaderLen], want)
		}
	}
	if len(resp.Players.Rows) != 255 || len(resp.Rules) != 100 {
		t.Fatalf("%d players, %d rules", len(resp.Players.Rows), len(resp.Rules))
	}
}
